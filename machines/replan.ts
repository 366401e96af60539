import { assign, enqueueActions, sendTo, setup } from 'xstate';
import type { PendingReplan } from './event-index.js';
import type { FileFault } from './log-faults.js';
import { type AckRecord, isInvalidating, type PulseEvent } from './pulse-files.js';

/** Why an ack was refused: a stable code beside PulseAgent's sentence. */
export type AckRejection =
  | 'missing_event_id'
  | 'unknown_event'
  | 'not_invalidating'
  | 'no_pending_replan'
  | 'stale_event';

/** The answer to one `replan.ack`, as `pulse_ack_replan` returns it. */
export interface AckReply {
  requestId: number;
  accepted: boolean;
  acknowledged_event_id: string | null;
  plan_sha256: string | null;
  reason: string;
  code?: AckRejection;
}

export interface ReplanContext extends PendingReplan {
  lastAck: AckRecord | null;
  lastReply: AckReply | null;
  /** What may hide a guidance or constraints change from the log now (the log owner says): the plan is on hold while any. */
  blind: FileFault[];
}

export type ReplanEvent =
  | { type: 'replan.restored'; pending: PendingReplan; lastAck: AckRecord | null }
  | { type: 'log.appended'; events: PulseEvent[] }
  | { type: 'log.faults'; blind: FileFault[] }
  | {
      type: 'replan.ack';
      requestId: number;
      eventId: string;
      /** The event the id names, looked up in the log; null when the log has no such id. */
      target: Pick<PulseEvent, 'id' | 'path'> | null;
      planSha256: string | null;
      at: string;
    };

type AckEvent = Extract<ReplanEvent, { type: 'replan.ack' }>;

export const ACK_ACCEPTED_REASON = 'Replan acknowledged for the latest guidance or constraints event.';

const rejectionReason = (code: AckRejection, eventId: string, pendingEventId: string | null): string => {
  switch (code) {
    case 'missing_event_id':
      return 'A pending replan event id is required.';
    case 'unknown_event':
      return `Event ${eventId} was not found.`;
    case 'not_invalidating':
      return `Event ${eventId} is not a guidance or constraints event.`;
    case 'no_pending_replan':
      return 'There is no pending guidance or constraints change to acknowledge.';
    case 'stale_event':
      return `Event ${eventId} is stale. Acknowledge the latest pending replan event ${pendingEventId} instead.`;
  }
};

/**
 * Whether the agent must stop and replan: a guidance or constraints change is pending, or pulse
 * cannot see or record such changes now (fail closed).
 */
export const needsReplan = (context: Pick<ReplanContext, 'pendingEventId' | 'blind'>): boolean =>
  context.pendingEventId !== null || context.blind.length > 0;

/** The first check of PulseAgent's order that refuses this ack, or null when it is accepted. */
export const replanAckRejection = (context: PendingReplan, event: AckEvent): AckRejection | null => {
  if (event.eventId.trim() === '') return 'missing_event_id';
  if (event.target === null) return 'unknown_event';
  if (!isInvalidating(event.target)) return 'not_invalidating';
  if (context.pendingEventId === null) return 'no_pending_replan';
  if (event.target.id !== context.pendingEventId) return 'stale_event';
  return null;
};

const withInvalidating = (context: PendingReplan, events: readonly PulseEvent[]): PendingReplan => {
  const pendingFiles = [...context.pendingFiles];
  let pendingEventId = context.pendingEventId;
  for (const event of events) {
    if (!isInvalidating(event)) continue;
    pendingEventId = event.id;
    if (!pendingFiles.includes(event.path)) pendingFiles.push(event.path);
  }
  return { pendingEventId, pendingFiles };
};

/**
 * The replan lifecycle: idle → pending → acknowledged, and back to pending on every new
 * guidance or constraints event. Decisions only; the log owner makes an accepted ack durable.
 */
export const replanMachine = setup({
  types: {
    context: {} as ReplanContext,
    events: {} as ReplanEvent,
  },
  guards: {
    hasInvalidating: ({ event }) =>
      event.type === 'log.appended' && event.events.some((e) => isInvalidating(e)),
    restoredPending: ({ event }) => event.type === 'replan.restored' && event.pending.pendingEventId !== null,
    restoredAcknowledged: ({ event }) => event.type === 'replan.restored' && event.lastAck !== null,
    isAcceptable: ({ context, event }) =>
      event.type === 'replan.ack' && replanAckRejection(context, event) === null,
  },
  actions: {
    restore: assign(({ event }) => {
      if (event.type !== 'replan.restored') return {};
      return { ...event.pending, lastAck: event.lastAck };
    }),
    recordInvalidation: assign(({ context, event }) =>
      event.type === 'log.appended' ? withInvalidating(context, event.events) : {},
    ),
    recordBlind: assign(({ event }) => (event.type === 'log.faults' ? { blind: event.blind } : {})),
    rejectAck: assign(({ context, event }) => {
      if (event.type !== 'replan.ack') return {};
      const code = replanAckRejection(context, event) ?? 'stale_event';
      return {
        lastReply: {
          requestId: event.requestId,
          accepted: false,
          acknowledged_event_id: context.lastAck?.eventId ?? null,
          plan_sha256: context.lastAck?.planSha256 ?? null,
          reason: rejectionReason(code, event.eventId, context.pendingEventId),
          code,
        },
      };
    }),
    acceptAck: assign(({ event }) => {
      if (event.type !== 'replan.ack') return {};
      return {
        pendingEventId: null,
        pendingFiles: [],
        lastAck: { eventId: event.eventId, planSha256: event.planSha256, at: event.at },
        lastReply: {
          requestId: event.requestId,
          accepted: true,
          acknowledged_event_id: event.eventId,
          plan_sha256: event.planSha256,
          reason: ACK_ACCEPTED_REASON,
        },
      };
    }),
    /** Tells the reflection gate (when the system has one) whether the agent must answer a replan first. */
    notifyGate: enqueueActions(({ context, enqueue, system }) => {
      const gate = system.get('gate');
      if (gate !== undefined) {
        const status = { type: 'replan.status', pending: needsReplan(context) } as const;
        enqueue.sendTo(gate, status);
      }
    }),
    persistAck: sendTo(
      ({ system }) => system.get('log'),
      ({ context, event }) => ({
        type: 'ack.record' as const,
        ack: context.lastAck!,
        requestId: event.type === 'replan.ack' ? event.requestId : 0,
      }),
    ),
  },
}).createMachine({
  id: 'replan',
  context: { pendingEventId: null, pendingFiles: [], lastAck: null, lastReply: null, blind: [] },
  on: {
    // Orthogonal to the lifecycle: acks are judged as ever, and the answers say the plan is on hold.
    'log.faults': { actions: ['recordBlind', 'notifyGate'] },
  },
  initial: 'loading',
  states: {
    loading: {
      description: 'Waiting for the log owner to load events.jsonl and state.json.',
      on: {
        'replan.restored': [
          { guard: 'restoredPending', target: 'pending', actions: 'restore' },
          { guard: 'restoredAcknowledged', target: 'acknowledged', actions: 'restore' },
          { target: 'idle', actions: 'restore' },
        ],
      },
    },
    idle: {
      entry: 'notifyGate',
      description: 'No guidance or constraints change has been logged since the log began.',
      on: {
        'log.appended': { guard: 'hasInvalidating', target: 'pending', actions: 'recordInvalidation' },
        'replan.ack': { actions: 'rejectAck' },
      },
    },
    pending: {
      entry: 'notifyGate',
      description:
        "The user changed guidance or constraints: the agent's plan is on hold until it acknowledges the latest such event.",
      on: {
        'log.appended': { actions: 'recordInvalidation' },
        'replan.ack': [
          { guard: 'isAcceptable', target: 'acknowledged', actions: ['acceptAck', 'persistAck'] },
          { actions: 'rejectAck' },
        ],
      },
    },
    acknowledged: {
      entry: 'notifyGate',
      description: 'The agent replanned for the latest guidance or constraints event.',
      on: {
        'log.appended': { guard: 'hasInvalidating', target: 'pending', actions: 'recordInvalidation' },
        'replan.ack': { actions: 'rejectAck' },
      },
    },
  },
});
