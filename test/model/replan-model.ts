import { assign, setup } from 'xstate';
import type { AckRejection, ReplanEvent } from '../../machines/replan-context.js';

/*
 * The replan lifecycle as PulseAgent's protocol describes it, written from the protocol and not
 * from machines/replan.ts: the replan model test generates its paths from this model and checks
 * the real machine and a real daemon against its answers, so a mistake copied into both cannot
 * pass unseen.
 */

const GUIDANCE_FILES = new Set(['.pulse/guidance.md', '.pulse/constraints.md']);

/** Whether an event is a change the agent must replan for: guidance or constraints. */
export const changesGuidance = (event: { path: string }): boolean => GUIDANCE_FILES.has(event.path);

/** The newest guidance/constraints event: the model's events name it by this id. */
export const LATEST = 'LATEST';

export interface ReplanModelContext {
  /** The files of the guidance/constraints changes since the last accepted ack, first changed first. */
  pendingFiles: string[];
  /** Something was acknowledged since the log began. */
  acknowledged: boolean;
  /** pulse cannot see guidance changes now. */
  blind: boolean;
  /** The answer to the last ack. */
  answer: AckRejection | 'accepted' | null;
}

type Ack = Extract<ReplanEvent, { type: 'replan.ack' }>;

/** PulseAgent's ack checks, in its order; `pending` is whether a replan is pending. */
const answerTo = (ack: Ack, pending: boolean): AckRejection | 'accepted' => {
  if (ack.eventId.trim() === '') return 'missing_event_id';
  if (ack.target === null) return 'unknown_event';
  if (!changesGuidance(ack.target)) return 'not_invalidating';
  if (!pending) return 'no_pending_replan';
  return ack.target.id === LATEST ? 'accepted' : 'stale_event';
};

const withChanges = (files: string[], event: ReplanEvent): string[] => {
  if (event.type !== 'log.appended') return files;
  const changed = event.events.filter(changesGuidance).map((e) => e.path);
  return [...new Set([...files, ...changed])];
};

/** The expected replan lifecycle: what pulse must answer after each restore, edit, ack and fault. */
export const replanModel = setup({
  types: { context: {} as ReplanModelContext, events: {} as ReplanEvent },
  guards: {
    anyChangesGuidance: ({ event }) => event.type === 'log.appended' && event.events.some(changesGuidance),
    restoredPending: ({ event }) => event.type === 'replan.restored' && event.pending.pendingFiles.length > 0,
    restoredAcknowledged: ({ event }) => event.type === 'replan.restored' && event.lastAck !== null,
    ackAccepted: ({ event }) => event.type === 'replan.ack' && answerTo(event, true) === 'accepted',
  },
  actions: {
    restore: assign(({ event }) =>
      event.type === 'replan.restored'
        ? { pendingFiles: event.pending.pendingFiles, acknowledged: event.lastAck !== null }
        : {},
    ),
    addChanges: assign(({ context, event }) => ({ pendingFiles: withChanges(context.pendingFiles, event) })),
    refuseWhileNothingPending: assign(({ event }) => ({
      answer: event.type === 'replan.ack' ? answerTo(event, false) : null,
    })),
    refuseWhilePending: assign(({ event }) => ({
      answer: event.type === 'replan.ack' ? answerTo(event, true) : null,
    })),
    accept: assign({ pendingFiles: [], acknowledged: true, answer: 'accepted' as const }),
    seeFaults: assign(({ event }) => ({ blind: event.type === 'log.faults' && event.blind.length > 0 })),
  },
}).createMachine({
  id: 'replanModel',
  context: { pendingFiles: [], acknowledged: false, blind: false, answer: null },
  on: { 'log.faults': { actions: 'seeFaults' } },
  initial: 'loading',
  states: {
    loading: {
      on: {
        'replan.restored': [
          { guard: 'restoredPending', target: 'pending', actions: 'restore' },
          { guard: 'restoredAcknowledged', target: 'acknowledged', actions: 'restore' },
          { target: 'idle', actions: 'restore' },
        ],
      },
    },
    idle: {
      on: {
        'log.appended': { guard: 'anyChangesGuidance', target: 'pending', actions: 'addChanges' },
        'replan.ack': { actions: 'refuseWhileNothingPending' },
      },
    },
    pending: {
      on: {
        'log.appended': { actions: 'addChanges' },
        'replan.ack': [
          { guard: 'ackAccepted', target: 'acknowledged', actions: 'accept' },
          { actions: 'refuseWhilePending' },
        ],
      },
    },
    acknowledged: {
      on: {
        'log.appended': { guard: 'anyChangesGuidance', target: 'pending', actions: 'addChanges' },
        'replan.ack': { actions: 'refuseWhileNothingPending' },
      },
    },
  },
});
