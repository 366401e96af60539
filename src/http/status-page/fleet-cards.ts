import type { FleetReceiptSeen } from '../../../machines/fleet-context.js';
import type { SystemStatus } from '../../system/system-status.js';
import { type Child, h, none, table, time } from './view.js';

// The fleet on the status page: its members with their agents and what each owes, and under
// each change in the history every other member's receipt. What peers said is text only.

/** The fleet card: the sentence, then each member with its agents and who still owes an ack. */
export const fleetCard = (s: SystemStatus): Child => {
  const fleet = s.fleet;
  if (fleet === undefined)
    return h('p', { class: 'muted' }, 'Not in a fleet: `pulse start --fleet nats://host:4222` joins one.');
  return [
    h('p', { class: 'headline', id: 'fleet-sentence' }, fleet.sentence),
    table(
      ['member', 'seen', 'agent', 'acknowledgement'],
      fleet.members.flatMap((m) =>
        (m.agents.length === 0 ? [null] : m.agents).map((a, i) => [
          i === 0 ? m.machine : '',
          i === 0 ? time(m.seenAt) : '',
          a === null ? none('no agent') : a.label,
          a === null
            ? ''
            : a.owes === null
              ? h('span', { class: 'chip' }, 'acknowledged all')
              : h('span', { class: 'chip warn' }, ['owes ', h('code', {}, a.owes)]),
        ]),
      ),
      'No member has said it is there yet.',
    ),
  ];
};

/** Another member's receipt under its change: machine and agent, when, what became of its plan. */
const receiptLine = (r: FleetReceiptSeen): Child =>
  h(
    'li',
    { class: r.plan_changed ? 'ack fleet' : 'ack unchanged fleet' },
    `${r.machine}: ${r.label}`,
    r.plan_changed
      ? [' acknowledged ', time(r.at), ': ', r.summary]
      : [' ', h('span', { class: 'chip warn' }, r.summary), ' ', time(r.at)],
    r.diff && h('details', {}, h('summary', {}, 'the plan’s diff'), h('pre', { class: 'diff' }, r.diff)),
  );

/** The other members' receipts of the change this member logged as `eventId`; none outside a fleet. */
export const fleetReceipts = (s: SystemStatus, eventId: string): Child[] => {
  const fleet = s.fleet;
  const change = fleet?.changes.find((c) => c.eventId === eventId);
  if (fleet === undefined || change === undefined) return [];
  return fleet.receipts
    .filter((r) => r.steerId === change.steerId && r.machine !== fleet.machine)
    .reverse()
    .map(receiptLine);
};
