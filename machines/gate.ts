import {
  type ActorRefFrom,
  type ActorSystem,
  assign,
  enqueueActions,
  fromPromise,
  raise,
  sendTo,
  setup,
  waitFor,
} from 'xstate';
import { errorMessage } from './error-message.js';
import type { InboxEvent } from './external.js';
import type { inboxMachine } from './inbox.js';

/** What a thinker says about one event: how urgent it is, 0..1. */
export interface Judgement {
  id: string;
  urgency: number;
}

/** What the agent reports per delivered event. */
export type AckOutcome = 'told' | 'not_worth_saying' | 'later';

export type DeliveredEvent = InboxEvent & { urgency: number };

/** A lease: events handed to the agent, which it must acknowledge before `leaseExpiresAt`. */
export interface Delivery {
  deliveryId: string;
  events: DeliveredEvent[];
  leaseExpiresAt: number;
}

/** Why an ack was refused: a stable code beside the sentence. */
export type GateAckRejection =
  | 'unknown_delivery'
  | 'already_acknowledged'
  | 'lease_expired'
  | 'unknown_event';

/** The answer to one `gate.ack`, as `pulse_ack_events` returns it. */
export interface GateAckReply {
  requestId: number;
  accepted: boolean;
  deliveryId: string;
  reason: string;
  code?: GateAckRejection;
  /** Event ids per fate; empty when refused. */
  consumed: string[];
  putBack: string[];
  deadLettered: string[];
}

/** Which gate held a reflection back. */
export type Gate = 'awaiting' | 'focus' | 'answering' | 'cooldown';

export interface GateInput {
  threshold?: number;
  cooldownMs?: number;
  leaseMs?: number;
  maxAttempts?: number;
  reflectEveryMs?: number;
  thinkTimeoutMs?: number;
}

export interface GateContext extends Required<GateInput> {
  focusUntil: number | null;
  replanPending: boolean;
  /** A reflection was asked for while gated or busy: it runs as soon as the gate is idle and open. */
  deferred: boolean;
  /** The events of the reflection in progress, in the order drained, and when they were drained. */
  batch: InboxEvent[];
  reflectedAt: number | null;
  delivery: Delivery | null;
  lastDeliveryAt: number | null;
  /** Delivery ids no longer out (most recent last), to tell a duplicate ack from an unknown one. */
  closed: Array<{ deliveryId: string; how: 'acknowledged' | 'expired' }>;
  deadLetters: InboxEvent[];
  drains: number;
  reflections: number;
  delivered: number;
  consumedSilently: number;
  putBack: number;
  deadLettered: number;
  thinkFailures: number;
  gated: Record<Gate, number>;
  lastGate: Gate | null;
  lastReply: GateAckReply | null;
  lastError: string | null;
  /** `consume` effects asked for, and the highest one known to be on disk: an ack is answered once its consume is saved. */
  consumeRequested: number;
  consumeSaved: number;
  consumeError: { seq: number; message: string } | null;
}

export type GateEvent =
  | { type: 'gate.reflect'; reason: 'inserted' | 'timer' | 'checkin' }
  | {
      type: 'gate.ack';
      requestId: number;
      deliveryId: string;
      /** Per event id; an event left out counts as told, and no outcomes at all means all told. */
      outcomes?: Record<string, AckOutcome>;
      now: number;
    }
  | { type: 'gate.focus'; until: number | null; now: number }
  | { type: 'gate.focusEnded'; at: number }
  | { type: 'replan.status'; pending: boolean }
  /** Sent by the `consume` effect once its removal is on disk (or could not be written). */
  | { type: 'gate.consumeSaved'; seq: number }
  | { type: 'gate.consumeFailed'; seq: number; message: string };

/** What `drainInbox` resolves to: everything the inbox held, and when it was taken (the reflection's "now"). */
export interface DrainOutput {
  events: InboxEvent[];
  at: number;
}

export const GATE_DEFAULTS: Required<GateInput> = {
  threshold: 0.5,
  cooldownMs: 0,
  leaseMs: 120_000,
  maxAttempts: 5,
  reflectEveryMs: 120_000,
  thinkTimeoutMs: 60_000,
};
export const DEAD_LETTERS_KEPT = 50;
const CLOSED_KEPT = 20;
/** Node timers hold at most 2^31 − 1 ms; a longer focus is waited out in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

type AckEvent = Extract<GateEvent, { type: 'gate.ack' }>;

/**
 * The effect the wiring provides as `drainInbox`: asks the inbox actor (system id `inbox`) to
 * drain and reads what it took from its `lastDrain`. The inbox drains synchronously in `ready`;
 * while it is still loading it ignores the request, and this rejects, having taken nothing.
 */
export const drainFromInbox = async (
  // biome-ignore lint/suspicious/noExplicitAny: any system holding an `inbox` will do.
  system: ActorSystem<any>,
  requestId: number,
  timeoutMs = 1_000,
): Promise<InboxEvent[]> => {
  const inbox = system.get('inbox') as ActorRefFrom<typeof inboxMachine> | undefined;
  if (inbox === undefined) throw new Error('No inbox actor in the system.');
  if (!inbox.getSnapshot().matches('ready')) throw new Error('The inbox is still loading.');
  inbox.send({ type: 'inbox.drain', requestId });
  const snapshot = await waitFor(inbox, (s) => s.context.lastDrain?.requestId === requestId, {
    timeout: timeoutMs,
  });
  return snapshot.context.lastDrain!.events;
};

/** Where each drained event goes after a thought: spoken, consumed silently, or retried. */
export const judge = (
  batch: readonly InboxEvent[],
  answer: readonly Judgement[],
  threshold: number,
): { speak: DeliveredEvent[]; quiet: InboxEvent[]; retry: InboxEvent[] } => {
  const urgency = new Map<string, number>();
  for (const j of Array.isArray(answer) ? answer : []) {
    if (typeof j?.id === 'string' && typeof j.urgency === 'number' && Number.isFinite(j.urgency)) {
      urgency.set(j.id, j.urgency);
    }
  }
  const speak: DeliveredEvent[] = [];
  const quiet: InboxEvent[] = [];
  const retry: InboxEvent[] = [];
  for (const event of batch) {
    const u = urgency.get(event.id);
    if (u === undefined) retry.push(event);
    else if (u >= threshold) speak.push({ ...event, urgency: u });
    else quiet.push(event);
  }
  return { speak, quiet, retry };
};

/** One more failed attempt for each event: those reaching `maxAttempts` are dead letters, the rest go back. */
export const retryOrDeadLetter = (
  events: readonly InboxEvent[],
  maxAttempts: number,
): { back: InboxEvent[]; dead: InboxEvent[] } => {
  const back: InboxEvent[] = [];
  const dead: InboxEvent[] = [];
  for (const event of events) {
    const next = { ...event, attempts: event.attempts + 1 };
    (next.attempts >= maxAttempts ? dead : back).push(next);
  }
  return { back, dead };
};

const stripUrgency = ({ urgency: _, ...event }: DeliveredEvent): InboxEvent => event;

const ackRejection = (context: GateContext, event: AckEvent): GateAckRejection | null => {
  const { delivery } = context;
  if (delivery === null || delivery.deliveryId !== event.deliveryId) {
    const closed = context.closed.find((c) => c.deliveryId === event.deliveryId);
    if (closed === undefined) return 'unknown_delivery';
    return closed.how === 'acknowledged' ? 'already_acknowledged' : 'lease_expired';
  }
  const ids = new Set(delivery.events.map((e) => e.id));
  if (Object.keys(event.outcomes ?? {}).some((id) => !ids.has(id))) return 'unknown_event';
  return null;
};

const rejectionReason = (code: GateAckRejection, context: GateContext, event: AckEvent): string => {
  const current = context.delivery
    ? ` The delivery out now is ${context.delivery.deliveryId}.`
    : ' No delivery is out now.';
  switch (code) {
    case 'unknown_delivery':
      return `Delivery ${event.deliveryId} is not known.${current}`;
    case 'already_acknowledged':
      return `Delivery ${event.deliveryId} was already acknowledged; its events will not be delivered again.${current}`;
    case 'lease_expired':
      return `The lease of delivery ${event.deliveryId} expired before this ack; its events went back to the inbox and will be delivered again.${current}`;
    case 'unknown_event': {
      const known = context.delivery!.events.map((e) => e.id).join(', ');
      const unknown = Object.keys(event.outcomes ?? {}).filter(
        (id) => !context.delivery!.events.some((e) => e.id === id),
      );
      return `Delivery ${event.deliveryId} has no event ${unknown.join(', ')}. Its events: ${known}.`;
    }
  }
};

const closing = (context: GateContext, how: 'acknowledged' | 'expired') =>
  context.delivery === null
    ? context.closed
    : [...context.closed, { deliveryId: context.delivery.deliveryId, how }].slice(-CLOSED_KEPT);

/** Counters and the kept dead letters after a retry. */
const retried = (context: GateContext, back: readonly InboxEvent[], dead: readonly InboxEvent[]) => ({
  putBack: context.putBack + back.length,
  deadLettered: context.deadLettered + dead.length,
  deadLetters: [...context.deadLetters, ...dead].slice(-DEAD_LETTERS_KEPT),
});

/**
 * The reflection gate: drains the inbox when a reflection is due and no gate holds it, asks the
 * thinker how urgent each event is, hands the urgent ones to the agent as a lease, consumes the
 * rest silently, and puts back (or dead-letters, after `maxAttempts`) whatever was not dealt with.
 */
export const gateMachine = setup({
  types: {
    context: {} as GateContext,
    events: {} as GateEvent,
    input: {} as GateInput | undefined,
  },
  actors: {
    drainInbox: fromPromise<DrainOutput, { requestId: number }>(async () => {
      throw new Error('drainInbox not provided');
    }),
    think: fromPromise<Judgement[], { events: InboxEvent[]; now: number }>(async () => {
      throw new Error('think not provided');
    }),
  },
  actions: {
    /** Effect: the events are dealt with for good (spoken or not worth saying). Provided by the wiring. */
    consume: (_, _params: { ids: string[]; seq: number }) => {},
    /** Effect: record dead letters durably and visibly. Provided by the wiring. */
    recordDeadLetters: (_, _params: { events: InboxEvent[] }) => {},
    /** Hook: a delivery is out (for a push notification later). */
    announceDelivery: (_, _params: { delivery: Delivery }) => {},
    /** Sends events back to the inbox front, in the order given. */
    putBack: sendTo(
      ({ system }) => system.get('inbox'),
      (_, params: { events: InboxEvent[] }) => ({ type: 'inbox.putBack' as const, events: params.events }),
    ),
    hold: assign(({ context }, params: { gate: Gate }) => ({
      deferred: true,
      lastGate: params.gate,
      gated: { ...context.gated, [params.gate]: context.gated[params.gate] + 1 },
    })),
    rejectAck: assign(({ context, event }) => {
      if (event.type !== 'gate.ack') return {};
      const code = ackRejection(context, event) ?? 'unknown_delivery';
      return {
        lastReply: {
          requestId: event.requestId,
          accepted: false,
          deliveryId: event.deliveryId,
          reason: rejectionReason(code, context, event),
          code,
          consumed: [],
          putBack: [],
          deadLettered: [],
        },
      };
    }),
  },
  guards: {
    inFocus: ({ context }) => context.focusUntil !== null,
    answering: ({ context }) => context.replanPending,
    shouldReflect: ({ context }) => context.deferred && context.focusUntil === null && !context.replanPending,
    isUsable: ({ context, event }) => {
      if (!('output' in event)) return false;
      const { speak, quiet } = judge(context.batch, event.output as Judgement[], context.threshold);
      return speak.length + quiet.length > 0;
    },
    hasDelivery: ({ context }) => context.delivery !== null,
    isCurrentDelivery: ({ context, event }) =>
      event.type === 'gate.ack' && ackRejection(context, event) === null,
  },
  delays: {
    reflectTimer: ({ context }) => context.reflectEveryMs,
    leaseTimeout: ({ context }) => context.leaseMs,
    cooldown: ({ context }) => context.cooldownMs,
    thinkTimeout: ({ context }) => context.thinkTimeoutMs,
  },
}).createMachine({
  id: 'gate',
  context: ({ input }) => ({
    ...GATE_DEFAULTS,
    ...Object.fromEntries(Object.entries(input ?? {}).filter(([, v]) => v !== undefined)),
    focusUntil: null,
    replanPending: false,
    deferred: false,
    batch: [],
    reflectedAt: null,
    delivery: null,
    lastDeliveryAt: null,
    closed: [],
    deadLetters: [],
    drains: 0,
    reflections: 0,
    delivered: 0,
    consumedSilently: 0,
    putBack: 0,
    deadLettered: 0,
    thinkFailures: 0,
    gated: { awaiting: 0, focus: 0, answering: 0, cooldown: 0 },
    lastGate: null,
    lastReply: null,
    lastError: null,
    consumeRequested: 0,
    consumeSaved: 0,
    consumeError: null,
  }),
  on: {
    'gate.ack': { actions: 'rejectAck' },
    'gate.focus': {
      actions: enqueueActions(({ enqueue, event }) => {
        enqueue.cancel('focusEnd');
        if (event.until === null || event.until <= event.now) {
          enqueue.assign({ focusUntil: null });
          return;
        }
        const at = Math.min(event.until, event.now + MAX_TIMER_MS);
        enqueue.assign({ focusUntil: event.until });
        enqueue.raise({ type: 'gate.focusEnded', at }, { id: 'focusEnd', delay: at - event.now });
      }),
    },
    'gate.focusEnded': {
      actions: enqueueActions(({ context, enqueue, event }) => {
        const until = context.focusUntil;
        if (until === null) return;
        if (until <= event.at) {
          enqueue.assign({ focusUntil: null });
          return;
        }
        const at = Math.min(until, event.at + MAX_TIMER_MS);
        enqueue.raise({ type: 'gate.focusEnded', at }, { id: 'focusEnd', delay: at - event.at });
      }),
    },
    'replan.status': { actions: assign(({ event }) => ({ replanPending: event.pending })) },
    'gate.consumeSaved': {
      actions: assign(({ context, event }) => ({ consumeSaved: Math.max(context.consumeSaved, event.seq) })),
    },
    'gate.consumeFailed': {
      actions: assign(({ event }) => ({
        consumeError: { seq: event.seq, message: event.message },
        lastError: `Could not record consumed events: ${event.message}`,
      })),
    },
  },
  initial: 'idle',
  states: {
    idle: {
      description:
        'No delivery is out. A reflection runs when asked (poller inserted, agent checked in) or on the timer, unless the user is in focus or a replan is pending; a held reflection runs as soon as those gates open.',
      always: { guard: 'shouldReflect', target: 'reflecting' },
      after: {
        reflectTimer: {
          target: 'idle',
          reenter: true,
          actions: raise({ type: 'gate.reflect', reason: 'timer' }),
        },
      },
      on: {
        'gate.reflect': [
          { guard: 'inFocus', actions: { type: 'hold', params: { gate: 'focus' } } },
          { guard: 'answering', actions: { type: 'hold', params: { gate: 'answering' } } },
          { target: 'reflecting' },
        ],
      },
    },
    reflecting: {
      description: 'Draining the whole inbox: from here on the drained events are out until judged.',
      entry: assign(({ context }) => ({ deferred: false, drains: context.drains + 1 })),
      on: { 'gate.reflect': { actions: assign({ deferred: true }) } },
      invoke: {
        src: 'drainInbox',
        input: ({ context }) => ({ requestId: context.drains }),
        onDone: [
          { guard: ({ event }) => event.output.events.length === 0, target: 'idle' },
          {
            target: 'thinking',
            actions: assign(({ context, event }) => ({
              batch: event.output.events,
              reflectedAt: event.output.at,
              reflections: context.reflections + 1,
            })),
          },
        ],
        onError: {
          target: 'idle',
          actions: assign(({ event }) => ({
            lastError: `Could not drain the inbox: ${errorMessage(event.error)}`,
          })),
        },
      },
    },
    thinking: {
      description: 'The thinker judges the drained events, as facts, not instructions.',
      on: { 'gate.reflect': { actions: assign({ deferred: true }) } },
      after: {
        thinkTimeout: {
          target: 'thoughtFailed',
          actions: assign(({ context }) => ({
            lastError: `The thinker did not answer within ${context.thinkTimeoutMs} ms.`,
          })),
        },
      },
      invoke: {
        src: 'think',
        input: ({ context }) => ({ events: context.batch, now: context.reflectedAt ?? 0 }),
        onDone: [
          {
            guard: 'isUsable',
            target: 'judged',
            actions: enqueueActions(({ context, event, enqueue }) => {
              const { speak, quiet, retry } = judge(context.batch, event.output, context.threshold);
              const seq = context.consumeRequested + (quiet.length > 0 ? 1 : 0);
              if (quiet.length > 0)
                enqueue({ type: 'consume', params: { ids: quiet.map((e) => e.id), seq } });
              const { back, dead } = retryOrDeadLetter(retry, context.maxAttempts);
              if (back.length > 0) enqueue({ type: 'putBack', params: { events: back } });
              if (dead.length > 0) enqueue({ type: 'recordDeadLetters', params: { events: dead } });
              const at = context.reflectedAt ?? 0;
              enqueue.assign({
                ...retried(context, back, dead),
                consumeRequested: seq,
                batch: [],
                consumedSilently: context.consumedSilently + quiet.length,
                delivery:
                  speak.length === 0
                    ? null
                    : {
                        deliveryId: `dlv_${at.toString(36)}_${context.drains}`,
                        events: speak,
                        leaseExpiresAt: at + context.leaseMs,
                      },
              });
            }),
          },
          {
            target: 'thoughtFailed',
            actions: assign({
              lastError: 'The thinker answered nothing usable for the events it was given.',
            }),
          },
        ],
        onError: {
          target: 'thoughtFailed',
          actions: assign(({ event }) => ({ lastError: `The thinker failed: ${errorMessage(event.error)}` })),
        },
      },
    },
    thoughtFailed: {
      description:
        'Transient: the thinker threw, timed out or covered no event. Every drained event goes back to the inbox front with one more attempt, or to the dead letters once out of attempts.',
      entry: enqueueActions(({ context, enqueue }) => {
        const { back, dead } = retryOrDeadLetter(context.batch, context.maxAttempts);
        if (back.length > 0) enqueue({ type: 'putBack', params: { events: back } });
        if (dead.length > 0) enqueue({ type: 'recordDeadLetters', params: { events: dead } });
        enqueue.assign({
          ...retried(context, back, dead),
          batch: [],
          thinkFailures: context.thinkFailures + 1,
        });
      }),
      always: 'idle',
    },
    judged: {
      description: 'Transient: urgent events make a delivery; otherwise back to idle.',
      always: [{ guard: 'hasDelivery', target: 'awaiting' }, { target: 'idle' }],
    },
    awaiting: {
      description:
        'A delivery is out to the agent under a lease: reflections leave the inbox untouched until it is acknowledged or the lease expires.',
      entry: [
        { type: 'announceDelivery', params: ({ context }) => ({ delivery: context.delivery! }) },
        assign(({ context }) => ({ delivered: context.delivered + context.delivery!.events.length })),
      ],
      on: {
        'gate.reflect': { actions: { type: 'hold', params: { gate: 'awaiting' } } },
        'gate.ack': [
          {
            guard: 'isCurrentDelivery',
            target: 'cooldown',
            actions: enqueueActions(({ context, event, enqueue }) => {
              const delivery = context.delivery!;
              const outcomes = event.outcomes ?? {};
              const later = delivery.events.filter((e) => outcomes[e.id] === 'later').map(stripUrgency);
              const done = delivery.events.filter((e) => outcomes[e.id] !== 'later').map((e) => e.id);
              const seq = context.consumeRequested + (done.length > 0 ? 1 : 0);
              if (done.length > 0) enqueue({ type: 'consume', params: { ids: done, seq } });
              const { back, dead } = retryOrDeadLetter(later, context.maxAttempts);
              if (back.length > 0) enqueue({ type: 'putBack', params: { events: back } });
              if (dead.length > 0) enqueue({ type: 'recordDeadLetters', params: { events: dead } });
              enqueue.assign({
                ...retried(context, back, dead),
                consumeRequested: seq,
                delivery: null,
                lastDeliveryAt: event.now,
                closed: closing(context, 'acknowledged'),
                lastReply: {
                  requestId: event.requestId,
                  accepted: true,
                  deliveryId: delivery.deliveryId,
                  reason: `Delivery ${delivery.deliveryId} acknowledged.`,
                  consumed: done,
                  putBack: back.map((e) => e.id),
                  deadLettered: dead.map((e) => e.id),
                },
              });
            }),
          },
          { actions: 'rejectAck' },
        ],
      },
      after: {
        leaseTimeout: {
          target: 'idle',
          actions: enqueueActions(({ context, enqueue }) => {
            const delivery = context.delivery!;
            const { back, dead } = retryOrDeadLetter(delivery.events.map(stripUrgency), context.maxAttempts);
            if (back.length > 0) enqueue({ type: 'putBack', params: { events: back } });
            if (dead.length > 0) enqueue({ type: 'recordDeadLetters', params: { events: dead } });
            enqueue.assign({
              ...retried(context, back, dead),
              delivery: null,
              closed: closing(context, 'expired'),
              lastError: `The lease of delivery ${delivery.deliveryId} expired: its events went back to the inbox.`,
            });
          }),
        },
      },
    },
    cooldown: {
      description:
        'A delivery was just acknowledged: no reflection until the minimum time between deliveries has passed.',
      on: {
        'gate.reflect': [
          { guard: 'inFocus', actions: { type: 'hold', params: { gate: 'focus' } } },
          { guard: 'answering', actions: { type: 'hold', params: { gate: 'answering' } } },
          { actions: { type: 'hold', params: { gate: 'cooldown' } } },
        ],
      },
      after: { cooldown: 'idle' },
    },
  },
});
