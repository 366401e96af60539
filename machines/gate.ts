import {
  type ActorRefFrom,
  type ActorSystem,
  type AnyActorRef,
  assign,
  enqueueActions,
  fromPromise,
  setup,
  waitFor,
} from 'xstate';
import {
  type AckOutcome,
  ackRejection,
  type Caller,
  type ClosedDelivery,
  type DeliveredEvent,
  type Delivery,
  type Fate,
  type GateAckRejection,
  judge,
  type RecentFate,
  rejectionReason,
  retryOrDeadLetter,
  splitOutcomes,
  stripUrgency,
  type Thought,
} from './delivery-rules.js';
import { errorMessage } from './error-message.js';
import type { InboxEvent } from './external.js';
import { INBOX_CAPACITY, type inboxMachine, type Settlement } from './inbox.js';
import { CATCH_UP_MS } from './poller.js';

export type {
  AckOutcome,
  Caller,
  DeliveredEvent,
  Delivery,
  GateAckRejection,
  Judgement,
  Thought,
} from './delivery-rules.js';

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
  /** The settlement that records this ack: answer once the inbox has it on disk. */
  settleSeq: number | null;
}

/** The answer to one `gate.claim`: the delivery this agent holds now, if any. */
export interface GateClaimReply {
  requestId: number;
  delivery: Delivery | null;
  /** Another agent holds the delivery that is out. */
  heldByOther: boolean;
}

/** Which gate held a reflection back. */
export type Gate = 'awaiting' | 'focus' | 'answering' | 'cooldown';

/** The gate's knobs, set from the `reflection` block of sources.json. */
export interface GateSettings {
  threshold: number;
  cooldownMs: number;
  leaseMs: number;
  maxAttempts: number;
  reflectEveryMs: number;
  thinkTimeoutMs: number;
  /** The wait after a failed thought; it doubles with each failure in a row, up to `RETRY_BACKOFF_MAX_FACTOR` times. */
  retryBackoffMs: number;
}

export type GateInput = Partial<GateSettings>;

/** An event as the last thought judged it. */
export interface JudgedEvent {
  id: string;
  source: string;
  title: string;
  urgency: number;
  why?: string;
  /** Set aside for the agent, or consumed silently below the threshold. */
  verdict: 'speak' | 'quiet';
}

/** The last thought that judged something: who judged, and what it made of each event. */
export interface ThoughtRecord {
  at: number;
  by: string;
  note: string | null;
  judged: JudgedEvent[];
  /** Events of the batch it left unjudged: back to the inbox with one more attempt. */
  unjudged: number;
}

export interface GateContext extends GateSettings {
  focusUntil: number | null;
  replanPending: boolean;
  /** A reflection was asked for while gated or busy: it runs as soon as the gate is idle and open. */
  deferred: boolean;
  /** The events of the reflection in progress, in the order drained, and when they were drained. */
  batch: InboxEvent[];
  reflectedAt: number | null;
  delivery: Delivery | null;
  lastDeliveryAt: number | null;
  closed: ClosedDelivery[];
  /** What happened to recent events, most recent last. */
  recent: RecentFate[];
  drains: number;
  reflections: number;
  delivered: number;
  consumedSilently: number;
  putBack: number;
  deadLettered: number;
  thinkFailures: number;
  /** Failed thoughts since the last usable one: the backoff doubles with each. */
  failedInARow: number;
  /** How many events the last failed thought had been given. */
  failedBatch: number;
  lastThought: ThoughtRecord | null;
  gated: Record<Gate, number>;
  lastGate: Gate | null;
  lastReply: GateAckReply | null;
  lastClaim: GateClaimReply | null;
  /** Settlements sent to the inbox so far (the last one's `seq`). */
  settles: number;
  lastError: string | null;
}

export type GateEvent =
  | { type: 'gate.reflect'; reason: 'inserted' | 'timer' | 'checkin' }
  /** An agent checked in and asks for the delivery set aside for it. */
  | ({ type: 'gate.claim'; requestId: number; now: number } & Caller)
  | ({
      type: 'gate.ack';
      requestId: number;
      deliveryId: string;
      /** Per event id; an event left out counts as told, and no outcomes at all means all told. */
      outcomes?: Record<string, AckOutcome>;
      now: number;
    } & Caller)
  | { type: 'gate.focus'; until: number | null; now: number }
  | { type: 'gate.focusEnded'; at: number }
  | { type: 'gate.configure'; settings: GateInput }
  | { type: 'replan.status'; pending: boolean };

/** What `drainInbox` resolves to: everything the inbox held, and when it was taken (the reflection's "now"). */
export interface DrainOutput {
  events: InboxEvent[];
  at: number;
}

export const GATE_DEFAULTS: GateSettings = {
  threshold: 0.5,
  cooldownMs: 0,
  leaseMs: 120_000,
  maxAttempts: 5,
  reflectEveryMs: 120_000,
  thinkTimeoutMs: 60_000,
  retryBackoffMs: 360_000,
};
/** The backoff after failed thoughts in a row stops doubling at this many times `retryBackoffMs`. */
export const RETRY_BACKOFF_MAX_FACTOR = 2;
/**
 * How long the gate waits after an insert for more: a poll that hit the per-tick cap is followed
 * by a catch-up poll `CATCH_UP_MS` later, and sources started together insert within moments.
 */
export const INSERT_QUIET_MS = CATCH_UP_MS + 1_000;

/**
 * A failed batch this big is tried again at the timer's pace, without the backoff: while it
 * waits, polls keep adding to the inbox, and once the inbox is full, new items stay at their
 * source, where a fast one scrolls them out of its list.
 */
export const BACKLOG_EVENTS = INBOX_CAPACITY / 4;

/** The wait before trying again after `failedInARow` failed thoughts. */
export const retryBackoffMs = (
  settings: Pick<GateSettings, 'retryBackoffMs'>,
  failedInARow: number,
): number => settings.retryBackoffMs * Math.min(2 ** Math.max(0, failedInARow - 1), RETRY_BACKOFF_MAX_FACTOR);
const CLOSED_KEPT = 20;
export const RECENT_KEPT = 20;
/** Node timers hold at most 2^31 − 1 ms; a longer focus is waited out in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const definedSettings = (input: GateInput | undefined): GateInput =>
  Object.fromEntries(
    Object.entries(input ?? {}).filter(([key, v]) => key in GATE_DEFAULTS && typeof v === 'number'),
  );

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

const closing = (context: GateContext, how: ClosedDelivery['how']) =>
  context.delivery === null
    ? context.closed
    : [...context.closed, { deliveryId: context.delivery.deliveryId, how }].slice(-CLOSED_KEPT);

/** A recent fate, with the thinker's reason when the event carries one. */
const fateOf = (event: InboxEvent | DeliveredEvent, fate: Fate, at: number): RecentFate => {
  const why = 'why' in event ? event.why : undefined;
  const plain = 'urgency' in event ? stripUrgency(event) : event;
  return why === undefined ? { event: plain, fate, at } : { event: plain, fate, at, why };
};

const remember = (
  context: GateContext,
  events: readonly (InboxEvent | DeliveredEvent)[],
  fate: Fate,
  at: number,
) => [...context.recent, ...events.map((event) => fateOf(event, fate, at))].slice(-RECENT_KEPT);

/** What a decision does with events: consumed for good, failed (one more attempt), or returned untried. */
type Decision = { consumed?: string[]; failed?: readonly InboxEvent[]; returned?: readonly InboxEvent[] };

/**
 * The settlement of a decision, for the inbox (which writes it and takes put-back events at its
 * front), and the gate's counters after it; null when there is nothing to settle. Failed events
 * cost one attempt each; returned ones (a delivery withdrawn before any agent had it) cost none.
 */
const settlement = (
  context: GateContext,
  at: number,
  { consumed = [], failed = [], returned = [] }: Decision,
) => {
  const { back, dead } = retryOrDeadLetter(failed, context.maxAttempts);
  const putBack = [...returned, ...back];
  const empty = consumed.length + putBack.length + dead.length === 0;
  const message: ({ type: 'inbox.settle' } & Settlement) | null = empty
    ? null
    : { type: 'inbox.settle', seq: context.settles + 1, at, consumed, putBack, deadLettered: dead };
  return {
    message,
    back,
    dead,
    counters: {
      settles: message?.seq ?? context.settles,
      putBack: context.putBack + back.length,
      deadLettered: context.deadLettered + dead.length,
    },
  };
};

// biome-ignore lint/suspicious/noExplicitAny: any system holding an `inbox` will do.
const inboxOf = (system: ActorSystem<any>) => system.get('inbox') as AnyActorRef;

/**
 * The reflection gate: drains the inbox when a reflection is due and no gate holds it, asks the
 * thinker how urgent each event is, sets the urgent ones aside as a delivery for the first agent
 * that checks in (a lease from then on), and settles the rest with the inbox: consumed silently,
 * or put back (dead-lettered after `maxAttempts`) when nothing dealt with them.
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
    think: fromPromise<Thought, { events: InboxEvent[]; now: number }>(async () => {
      throw new Error('think not provided');
    }),
  },
  actions: {
    /** Asks for a reflection that runs as soon as the gate is idle and open. */
    deferReflection: assign({ deferred: true }),
    countFailedThought: assign(({ context }) => ({
      thinkFailures: context.thinkFailures + 1,
      failedInARow: context.failedInARow + 1,
      failedBatch: context.batch.length,
    })),
    recordThought: assign(({ context, event }) => {
      const thought = (event as { output?: Thought }).output;
      if (thought === undefined) return {};
      const { speak, quiet, retry } = judge(context.batch, thought.judgements, context.threshold);
      const entry = (verdict: JudgedEvent['verdict']) => (e: DeliveredEvent) => ({
        id: e.id,
        source: e.source,
        title: e.title,
        urgency: e.urgency,
        ...(e.why === undefined ? {} : { why: e.why }),
        verdict,
      });
      return {
        failedInARow: 0,
        lastThought: {
          at: context.reflectedAt ?? 0,
          by: thought.by,
          note: thought.note,
          judged: [...speak.map(entry('speak')), ...quiet.map(entry('quiet'))],
          unjudged: retry.length,
        },
      };
    }),
    /** Hook: a delivery is out to an agent (for a push notification later). */
    announceDelivery: (_, _params: { delivery: Delivery }) => {},
    hold: assign(({ context }, params: { gate: Gate }) => ({
      deferred: true,
      lastGate: params.gate,
      gated: { ...context.gated, [params.gate]: context.gated[params.gate] + 1 },
    })),
    rejectAck: assign(({ context, event }) => {
      if (event.type !== 'gate.ack') return {};
      const { deliveryId, outcomes } = event;
      const code =
        ackRejection(context.delivery, context.closed, deliveryId, outcomes, event) ?? 'unknown_delivery';
      return {
        lastReply: {
          requestId: event.requestId,
          accepted: false,
          deliveryId,
          reason: rejectionReason(code, context.delivery, deliveryId, outcomes),
          code,
          consumed: [],
          putBack: [],
          deadLettered: [],
          settleSeq: null,
        },
      };
    }),
    answerClaim: assign(({ context, event }) => {
      if (event.type !== 'gate.claim') return {};
      const holder = context.delivery?.holder ?? null;
      const mine = holder !== null && holder === event.agent;
      return {
        lastClaim: {
          requestId: event.requestId,
          delivery: mine ? context.delivery : null,
          heldByOther: holder !== null && !mine,
        },
      };
    }),
  },
  guards: {
    inFocus: ({ context }) => context.focusUntil !== null,
    answering: ({ context }) => context.replanPending,
    shouldReflect: ({ context }) => context.deferred && context.focusUntil === null && !context.replanPending,
    gateClosed: ({ context }) => context.focusUntil !== null || context.replanPending,
    isUsable: ({ context, event }) => {
      if (!('output' in event)) return false;
      const judgements = (event.output as Thought | undefined)?.judgements ?? [];
      const { speak, quiet } = judge(context.batch, judgements, context.threshold);
      return speak.length + quiet.length > 0;
    },
    isBacklog: ({ context }) => context.failedBatch >= BACKLOG_EVENTS,
    isInsert: ({ event }) => event.type === 'gate.reflect' && event.reason === 'inserted',
    drainedNothing: ({ event }) => 'output' in event && (event.output as DrainOutput).events.length === 0,
    hasDelivery: ({ context }) => context.delivery !== null,
    isCurrentDelivery: ({ context, event }) =>
      event.type === 'gate.ack' &&
      ackRejection(context.delivery, context.closed, event.deliveryId, event.outcomes, event) === null,
  },
  delays: {
    reflectTimer: ({ context }) => context.reflectEveryMs,
    leaseTimeout: ({ context }) => context.leaseMs,
    cooldown: ({ context }) => context.cooldownMs,
    thinkTimeout: ({ context }) => context.thinkTimeoutMs,
    insertQuiet: INSERT_QUIET_MS,
    // A stream of inserts that never pauses still gets a reflection at the timer's pace.
    insertSettleMax: ({ context }) => context.reflectEveryMs,
    retryBackoff: ({ context }) => retryBackoffMs(context, context.failedInARow),
  },
}).createMachine({
  id: 'gate',
  context: ({ input }) => ({
    ...GATE_DEFAULTS,
    ...definedSettings(input),
    focusUntil: null,
    replanPending: false,
    deferred: false,
    batch: [],
    reflectedAt: null,
    delivery: null,
    lastDeliveryAt: null,
    closed: [],
    recent: [],
    drains: 0,
    reflections: 0,
    delivered: 0,
    consumedSilently: 0,
    putBack: 0,
    deadLettered: 0,
    thinkFailures: 0,
    failedInARow: 0,
    failedBatch: 0,
    lastThought: null,
    gated: { awaiting: 0, focus: 0, answering: 0, cooldown: 0 },
    lastGate: null,
    lastReply: null,
    lastClaim: null,
    settles: 0,
    lastError: null,
  }),
  on: {
    'gate.ack': { actions: 'rejectAck' },
    'gate.claim': { actions: 'answerClaim' },
    'gate.configure': { actions: assign(({ event }) => definedSettings(event.settings)) },
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
          actions: enqueueActions(({ enqueue }) => enqueue.raise({ type: 'gate.reflect', reason: 'timer' })),
        },
      },
      on: {
        'gate.reflect': [
          { guard: 'inFocus', actions: { type: 'hold', params: { gate: 'focus' } } },
          { guard: 'answering', actions: { type: 'hold', params: { gate: 'answering' } } },
          { guard: 'isInsert', target: 'settling' },
          { target: 'reflecting' },
        ],
      },
    },
    settling: {
      description:
        'New events were just inserted: waiting until no more arrive for a moment (a catch-up poll follows a capped one within seconds; sources started together insert together), so that they make one thought. A check-in or the timer does not wait.',
      after: { insertSettleMax: { target: 'idle', actions: 'deferReflection' } },
      on: { 'gate.reflect': { target: 'idle', actions: 'deferReflection' } },
      initial: 'quiet',
      states: {
        quiet: {
          description: 'Each insert starts the quiet period over; the settling as a whole is bounded.',
          after: { insertQuiet: { target: '#gate.idle', actions: 'deferReflection' } },
          on: { 'gate.reflect': { guard: 'isInsert', target: 'quiet', reenter: true } },
        },
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
          { guard: 'drainedNothing', target: 'idle' },
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
            actions: [
              'recordThought',
              enqueueActions(({ context, event, enqueue, system }) => {
                const { speak, quiet, retry } = judge(
                  context.batch,
                  event.output.judgements,
                  context.threshold,
                );
                const at = context.reflectedAt ?? 0;
                const settled = settlement(context, at, { consumed: quiet.map((e) => e.id), failed: retry });
                if (settled.message) enqueue.sendTo(inboxOf(system), settled.message);
                enqueue.assign({
                  ...settled.counters,
                  batch: [],
                  consumedSilently: context.consumedSilently + quiet.length,
                  recent: remember(context, quiet, 'below_threshold', at),
                  delivery:
                    speak.length === 0
                      ? null
                      : {
                          deliveryId: `dlv_${at.toString(36)}_${context.drains}`,
                          events: speak,
                          holder: null,
                          holderSession: null,
                          leaseExpiresAt: null,
                        },
                });
              }),
            ],
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
        'Transient: the thinker threw, timed out or covered no event. Every drained event goes back to the inbox front with one more attempt, or to the dead letters once out of attempts. The gate backs off, unless the batch was a backlog big enough to fill the inbox while it waited.',
      entry: [
        'countFailedThought',
        enqueueActions(({ context, enqueue, system }) => {
          const settled = settlement(context, context.reflectedAt ?? 0, {
            consumed: [],
            failed: context.batch,
          });
          if (settled.message) enqueue.sendTo(inboxOf(system), settled.message);
          enqueue.assign({ ...settled.counters, batch: [] });
        }),
      ],
      always: [{ guard: 'isBacklog', target: 'idle' }, { target: 'backingOff' }],
    },
    backingOff: {
      description:
        'A thought failed and its events are back in the inbox. The thinker is asked again when new events arrive (they make one thought with the failed ones) or once the backoff has passed, which doubles with each failure in a row; the timer and check-ins do not ask it meanwhile.',
      after: { retryBackoff: { target: 'idle', actions: 'deferReflection' } },
      on: { 'gate.reflect': { guard: 'isInsert', target: 'settling' } },
    },
    judged: {
      description: 'Transient: urgent events make a delivery; otherwise back to idle.',
      always: [{ guard: 'hasDelivery', target: 'offered' }, { target: 'idle' }],
    },
    offered: {
      description:
        'Urgent events are set aside for the agents: the first to check in takes them, and its lease starts then. The inbox is left untouched meanwhile. Should the user go into focus or a replan become pending first, the events go back to the inbox front untried, to be judged again once the gate opens.',
      always: {
        guard: 'gateClosed',
        target: 'idle',
        actions: enqueueActions(({ context, enqueue, system }) => {
          const settled = settlement(context, context.reflectedAt ?? 0, {
            returned: context.delivery!.events.map(stripUrgency),
          });
          if (settled.message) enqueue.sendTo(inboxOf(system), settled.message);
          enqueue.assign({ ...settled.counters, delivery: null, deferred: true });
        }),
      },
      on: {
        'gate.reflect': { actions: { type: 'hold', params: { gate: 'awaiting' } } },
        'gate.claim': {
          target: 'awaiting',
          actions: [
            assign(({ context, event }) => ({
              delivery: {
                ...context.delivery!,
                holder: event.agent,
                holderSession: event.session ?? null,
                leaseExpiresAt: event.now + context.leaseMs,
              },
              recent: remember(context, context.delivery!.events, 'delivered', event.now),
            })),
            'answerClaim',
          ],
        },
      },
    },
    awaiting: {
      description:
        'A delivery is out to one agent under a lease: reflections leave the inbox untouched, and other agents get nothing, until it is acknowledged or the lease expires.',
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
            actions: enqueueActions(({ context, event, enqueue, system }) => {
              const delivery = context.delivery!;
              const { done, later } = splitOutcomes(delivery, event.outcomes);
              const settled = settlement(context, event.now, {
                consumed: done.map((d) => d.event.id),
                failed: later,
              });
              if (settled.message) enqueue.sendTo(inboxOf(system), settled.message);
              enqueue.assign({
                ...settled.counters,
                delivery: null,
                lastDeliveryAt: event.now,
                closed: closing(context, 'acknowledged'),
                recent: [
                  ...context.recent,
                  ...done.map(({ event: e, fate }) =>
                    fateOf(delivery.events.find((d) => d.id === e.id) ?? e, fate, event.now),
                  ),
                ].slice(-RECENT_KEPT),
                lastReply: {
                  requestId: event.requestId,
                  accepted: true,
                  deliveryId: delivery.deliveryId,
                  reason: `Delivery ${delivery.deliveryId} acknowledged.`,
                  consumed: done.map((d) => d.event.id),
                  putBack: settled.back.map((e) => e.id),
                  deadLettered: settled.dead.map((e) => e.id),
                  settleSeq: settled.message?.seq ?? null,
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
          actions: enqueueActions(({ context, enqueue, system }) => {
            const delivery = context.delivery!;
            const settled = settlement(context, delivery.leaseExpiresAt ?? 0, {
              failed: delivery.events.map(stripUrgency),
            });
            if (settled.message) enqueue.sendTo(inboxOf(system), settled.message);
            enqueue.assign({
              ...settled.counters,
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
