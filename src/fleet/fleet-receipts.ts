import { createHash } from 'node:crypto';
import type { FleetAgentSeen, FleetMemberSeen, FleetReceiptSeen } from '../../machines/fleet-context.js';
import type { ReplanAck } from '../../machines/replan-acks.js';
import { agentLabel } from '../system/agent-label.js';
import { terminalText } from '../text/terminal-text.js';
import { type FleetMachine, machineLabel, parseMachine, STEER_ID } from './fleet-messages.js';

/** A receipt's message, whole, at most: its diff is cut well below it. */
export const RECEIPT_LIMIT = 32 * 1024;
/** The plan diff a receipt carries, at most (characters); a longer one is cut and says so. */
const DIFF_LIMIT = 16 * 1024;
const LABEL_LIMIT = 200;
const SUMMARY_LIMIT = 400;
/** Agents a member entry lists, at most. */
export const ENTRY_AGENTS = 200;

/**
 * One agent's ack of a fleet change, published by its member on `pulse.fleet.<project>.ack.<machine id>`:
 * what a member keeps of it (`steerId` names the change the same on every member, unlike each
 * member's event id; `receiptId` is the JetStream message id, so a resend is stored once), with its machine whole.
 */
export type FleetReceipt = Omit<FleetReceiptSeen, 'machine'> & {
  v: 1;
  kind: 'receipt';
  machine: FleetMachine;
};

const cut = (text: string, limit: number) => (text.length > limit ? `${text.slice(0, limit)}…` : text);

/** The receipt of `ack`, the agent's own ack on `machine`, for the fleet change `steerId`. */
export const fleetReceipt = (machine: FleetMachine, steerId: string, ack: ReplanAck): FleetReceipt => ({
  v: 1,
  kind: 'receipt',
  // The same ack gives the same id: a receipt made twice (a restart) is stored and kept once.
  receiptId: `frc_${createHash('sha256').update(`${machine.id} ${ack.agent} ${ack.event_id} ${ack.at}`).digest('hex').slice(0, 32)}`,
  steerId,
  machine,
  agent: cut(ack.agent, LABEL_LIMIT),
  label: cut(agentLabel(ack), LABEL_LIMIT),
  at: ack.at,
  plan_changed: ack.plan_changed,
  added: ack.added,
  removed: ack.removed,
  summary: cut(ack.summary, SUMMARY_LIMIT),
  diff: ack.diff === null ? null : cut(ack.diff, DIFF_LIMIT),
});

/** Text from another machine, one line, no escapes, bounded; null when not a string or over `limit`. */
const line = (value: unknown, limit: number): string | null =>
  typeof value === 'string' && value.length <= limit + 1 ? terminalText(value).trim() : null;

/** A diff from another machine: each line cleaned of escapes and controls, bounded. */
const cleanDiff = (value: unknown): string | null | undefined => {
  if (value === null) return null;
  if (typeof value !== 'string' || value.length > DIFF_LIMIT + 1) return undefined;
  return value
    .split('\n')
    .map((l) => terminalText(l))
    .join('\n');
};

const count = (value: unknown) =>
  Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : null;

/**
 * A receipt from the fleet as this member keeps it, or why it is refused: data from another
 * machine, checked whole (size, ids, its machine the one its subject names, numbers, times),
 * its words cleaned of terminal escapes and bounded. It only ever shows; it frees no agent.
 */
export const parseFleetReceipt = (data: Uint8Array, subjectMachine: string): FleetReceiptSeen | string => {
  if (data.length > RECEIPT_LIMIT) return 'too large';
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    return 'not JSON';
  }
  const m = value as Partial<FleetReceipt> | null;
  if (typeof m !== 'object' || m === null || m.v !== 1 || m.kind !== 'receipt') return 'not a receipt';
  if (typeof m.receiptId !== 'string' || !STEER_ID.test(m.receiptId)) return 'its receipt id is malformed';
  if (typeof m.steerId !== 'string' || !STEER_ID.test(m.steerId)) return 'its steer id is malformed';
  const machine = parseMachine(m.machine);
  if (machine === null) return 'its machine is malformed';
  if (machine.id !== subjectMachine) return 'its machine is not the one its subject names';
  const agent = line(m.agent, LABEL_LIMIT);
  const label = line(m.label, LABEL_LIMIT);
  const summary = line(m.summary, SUMMARY_LIMIT);
  if (!agent || !label || summary === null) return 'its agent, label or summary is malformed or too long';
  if (typeof m.at !== 'string' || m.at.length > 40 || Number.isNaN(Date.parse(m.at)))
    return 'its time is malformed';
  const added = count(m.added);
  const removed = count(m.removed);
  if (typeof m.plan_changed !== 'boolean' || added === null || removed === null)
    return 'its plan change is malformed';
  const diff = cleanDiff(m.diff);
  if (diff === undefined) return 'its diff is malformed or too long';
  return {
    receiptId: m.receiptId,
    steerId: m.steerId,
    machine: machineLabel(machine),
    agent,
    label,
    at: m.at,
    plan_changed: m.plan_changed,
    added,
    removed,
    summary,
    diff,
  };
};

/** What a member says of itself in the members bucket: who, when, its agents and what each owes, what it applied. */
export interface FleetMemberEntry {
  machine: string;
  at: string;
  agents: FleetAgentSeen[];
  applied: FleetMemberSeen['applied'];
}

const seq = (value: unknown): number | null =>
  Number.isSafeInteger(value) && (value as number) > 0 ? (value as number) : null;

/** A member entry from the bucket, cleaned and bounded; null when it is not one. */
export const parseMemberEntry = (text: string): FleetMemberSeen | null => {
  if (text.length > 128 * 1024) return null;
  let value: Partial<FleetMemberEntry>;
  try {
    value = JSON.parse(text) as Partial<FleetMemberEntry>;
  } catch {
    return null;
  }
  const machine = line(value?.machine, 100);
  if (!machine || typeof value.at !== 'string') return null;
  const agents = (Array.isArray(value.agents) ? value.agents : []).slice(0, ENTRY_AGENTS).flatMap((a) => {
    const agent = line(a?.agent, LABEL_LIMIT);
    const label = line(a?.label, LABEL_LIMIT);
    const owes =
      a?.owes === null ? null : typeof a?.owes === 'string' && STEER_ID.test(a.owes) ? a.owes : undefined;
    if (!agent || !label || owes === undefined) return [];
    return [{ agent, label, owes, owesSeq: seq(a.owesSeq) }];
  });
  const applied: FleetMemberSeen['applied'] = {};
  for (const file of ['guidance', 'constraints'] as const) {
    const n = seq((value.applied as Record<string, unknown> | undefined)?.[file]);
    if (n !== null) applied[file] = n;
  }
  return { machine, seenAt: value.at.slice(0, 40), agents, applied };
};
