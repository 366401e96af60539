import {
  ackRejection,
  type Caller,
  closing,
  type Delivery,
  fateOf,
  judge,
  judgesAny,
  rejectionReason,
  remember,
  retryOrDeadLetter,
  splitOutcomes,
  stripUrgency,
  type Thought,
} from './delivery-rules.js';
import { errorMessage } from './error-message.js';
import type { InboxEvent } from './external.js';
import type {
  Ack,
  Claim,
  DrainOutput,
  GateAckAnswer,
  GateContext,
  HoldReason,
  JudgedEvent,
  ThinkFailure,
} from './gate-context.js';
import { BACKLOG_EVENTS, retryDelayMs } from './gate-settings.js';
import type { SettleEvent } from './inbox-context.js';
import { type Asking, answerOf, type ReplyOut } from './reply.js';

/*
 * What each of the gate's decisions does, as pure functions of its context: the gate's named
 * actions apply them, so each can be read, tested and swapped on its own.
 */

/**
 * Whether the gate is open: the user is not in focus and no replan is pending. A held reflection
 * runs, and an offered delivery stands, only while it is.
 */
export const gateOpen = (context: Pick<GateContext, 'focusUntil' | 'replanPending'>): boolean =>
  context.focusUntil === null && !context.replanPending;

/**
 * A decision of the gate: what changes in its context, the settlement it sends the inbox (null:
 * nothing to settle), and an ack's reply when no settlement carries it.
 */
export interface GateDecision {
  changes: Partial<GateContext>;
  settle: SettleEvent | null;
  reply?: ReplyOut;
}

/** A decision that only answers a request: no change, nothing to settle. */
const answered = <A>(asking: Asking<A>, answer: A): GateDecision => ({
  changes: {},
  settle: null,
  reply: answerOf(asking, answer),
});

/** What a decision does with events: consumed for good, failed (one more attempt), or returned untried. */
interface Fates {
  consumed?: string[];
  failed?: readonly InboxEvent[];
  returned?: readonly InboxEvent[];
}

/**
 * The settlement of a decision, for the inbox (which writes it and takes put-back events at its
 * front), and the gate's counters after it. Failed events cost one attempt each, and those out of
 * attempts are dead letters; returned ones (a delivery withdrawn before any agent had it) cost none.
 */
const settling = (context: GateContext, at: number, { consumed = [], failed = [], returned = [] }: Fates) => {
  const { back, dead } = retryOrDeadLetter(failed, context.maxAttempts);
  const putBack = [...returned, ...back];
  const settle: GateDecision['settle'] =
    consumed.length + putBack.length + dead.length === 0
      ? null
      : {
          type: 'inbox.settle',
          seq: context.settles + 1,
          at,
          consumed,
          putBack,
          deadLettered: dead,
          reply: null,
        };
  return {
    settle,
    back,
    dead,
    counters: {
      settles: settle?.seq ?? context.settles,
      putBack: context.putBack + back.length,
      deadLettered: context.deadLettered + dead.length,
    },
  };
};

/** How a thought judged the batch: urgent, below the threshold, and left unjudged. */
type Verdicts = ReturnType<typeof judge>;

/** What the thought made of each event of the batch, for the status. */
const thoughtRecord = (
  context: GateContext,
  thought: Thought,
  { speak, quiet, retry }: Verdicts,
): Partial<GateContext> => {
  const entry =
    (verdict: JudgedEvent['verdict']) =>
    ({ id, source, title, urgency, why }: (typeof speak)[number]): JudgedEvent => ({
      id,
      source,
      title,
      urgency,
      ...(why === undefined ? {} : { why }),
      verdict,
    });
  return {
    failedInARow: 0,
    endpointFailuresInARow: 0,
    lastFailure: null,
    lastThought: {
      at: context.reflectedAt ?? 0,
      by: thought.by,
      note: thought.note,
      judged: [...speak.map(entry('speak')), ...quiet.map(entry('quiet'))],
      unjudged: retry.length,
    },
  };
};

/**
 * A usable thought, judged once: recorded; events below the threshold are consumed silently, those
 * it left unjudged go back with one more attempt, and the urgent ones are set aside as a delivery
 * no agent holds yet.
 */
export const thoughtSettled = (context: GateContext, thought: Thought): GateDecision => {
  const verdicts = judge(context.batch, thought.judgements, context.threshold);
  const { speak, quiet, retry } = verdicts;
  const at = context.reflectedAt ?? 0;
  const { settle, counters } = settling(context, at, { consumed: quiet.map((e) => e.id), failed: retry });
  const delivery: Delivery | null =
    speak.length === 0
      ? null
      : {
          deliveryId: `dlv_${at.toString(36)}_${context.drains}`,
          events: speak,
          holder: null,
          holderSession: null,
          leaseExpiresAt: null,
        };
  return {
    settle,
    changes: {
      ...thoughtRecord(context, thought, verdicts),
      ...counters,
      batch: [],
      consumedSilently: context.consumedSilently + quiet.length,
      recent: remember(
        context.recent,
        quiet.map((e) => fateOf(e, 'below_threshold', at)),
      ),
      delivery,
    },
  };
};

/** Whether a thought judged any event of the batch (by `judge`'s own rule): one that judged none has failed. */
export const isUsable = (context: GateContext, thought: Thought | undefined): boolean =>
  judgesAny(context.batch, thought?.judgements ?? []);

/** What the gate knows of a failed thought when it settles it: the sentence for status, and the failure but its retry time. */
export type FailureNote = Omit<ThinkFailure, 'retryAt'> & { message: string };

/** The longest reason kept from an error that names none. */
const REASON_MAX = 80;

/**
 * A thinker's error as a failure note. The daemon's thinkers throw errors that carry when they
 * failed, why in a few words and the endpoint's `Retry-After` (src/thinkers/thought-error.ts);
 * any other error counts as failing at `fallbackAt`, with its message as the reason.
 */
export const failureOf = (error: unknown, fallbackAt: number): FailureNote => {
  const carried = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  const message = errorMessage(error);
  return {
    message: `The thinker failed: ${message}`,
    at: typeof carried.at === 'number' ? carried.at : fallbackAt,
    reason: typeof carried.reason === 'string' ? carried.reason : message.slice(0, REASON_MAX),
    // A failure that does not say what failed is taken for the endpoint's: backing off is the safe side.
    kind: carried.kind === 'answer' ? 'answer' : 'endpoint',
    retryAfterMs:
      typeof carried.retryAfterMs === 'number' && carried.retryAfterMs >= 0 ? carried.retryAfterMs : null,
  };
};

/** The thinker answered, but judged no event of the batch: the answer's failure, at its time. */
export const answerUnusable = (context: GateContext, thought: Thought | undefined): FailureNote => ({
  message: 'The thinker answered nothing usable for the events it was given.',
  at: thought?.at ?? context.reflectedAt ?? 0,
  reason: 'an answer that judged none of the events',
  kind: 'answer',
  retryAfterMs: null,
});

/** The thinker did not answer within its timeout: the endpoint's failure, at the timeout's end. */
export const thinkTimedOut = (context: GateContext): FailureNote => ({
  message: `The thinker did not answer within ${context.thinkTimeoutMs} ms.`,
  at: (context.reflectedAt ?? 0) + context.thinkTimeoutMs,
  reason: `no answer within ${context.thinkTimeoutMs / 1000} s`,
  kind: 'endpoint',
  retryAfterMs: null,
});

/**
 * A failed thought, counted: every drained event goes back with one more attempt, or to the dead
 * letters, and the thinker is asked again after `retryDelayMs`: at the next reflection after a
 * failed answer, backing off only while the endpoint fails (a backlog at the timer's pace).
 */
export const thoughtFailed = (context: GateContext, note: FailureNote): GateDecision => {
  const { settle, counters } = settling(context, note.at, { failed: context.batch });
  const failedInARow = context.failedInARow + 1;
  const endpointFailuresInARow = note.kind === 'endpoint' ? context.endpointFailuresInARow + 1 : 0;
  const wait =
    context.batch.length >= BACKLOG_EVENTS
      ? context.reflectEveryMs
      : retryDelayMs(context, endpointFailuresInARow, note.retryAfterMs);
  const { message, ...failure } = note;
  return {
    settle,
    changes: {
      ...counters,
      batch: [],
      thinkFailures: context.thinkFailures + 1,
      failedInARow,
      endpointFailuresInARow,
      failedBatch: context.batch.length,
      lastError: message,
      lastFailure: { ...failure, retryAt: note.at + wait },
    },
  };
};

/** A delivery no agent claimed, withdrawn as the gate closed: its events go back to the front untried. */
export const offerWithdrawn = (context: GateContext, delivery: Delivery): GateDecision => {
  const { settle, counters } = settling(context, context.reflectedAt ?? 0, {
    returned: delivery.events.map(stripUrgency),
  });
  return { settle, changes: { ...counters, delivery: null, deferred: true } };
};

/** The first claim of a delivery: it is this agent's from now on, under a lease that starts now, and counts as delivered. */
export const deliveryClaimed = (
  context: GateContext,
  delivery: Delivery,
  claim: Claim,
): Partial<GateContext> => ({
  delivery: {
    ...delivery,
    holder: claim.agent,
    holderSession: claim.session ?? null,
    leaseExpiresAt: claim.now + context.leaseMs,
  },
  delivered: context.delivered + delivery.events.length,
  recent: remember(
    context.recent,
    delivery.events.map((e) => fateOf(e, 'delivered', claim.now)),
  ),
});

/**
 * The holder's ack: events told or not worth saying are consumed, those for later go back with one
 * more attempt. Its answer travels with the settlement, so the inbox sends it once that is on disk.
 */
export const ackSettled = (context: GateContext, delivery: Delivery, ack: Ack): GateDecision => {
  const { done, later } = splitOutcomes(delivery, ack.outcomes);
  const consumed = done.map((d) => d.event.id);
  const { settle, back, dead, counters } = settling(context, ack.now, { consumed, failed: later });
  const settled = { consumed, putBack: back.map((e) => e.id), deadLettered: dead.map((e) => e.id) };
  const answer: GateAckAnswer = {
    accepted: true,
    deliveryId: delivery.deliveryId,
    reason: `Delivery ${delivery.deliveryId} acknowledged.`,
    ...settled,
  };
  const reply = answerOf(ack, answer);
  return {
    ...(settle === null ? { settle, reply } : { settle: { ...settle, reply } }),
    changes: {
      ...counters,
      delivery: null,
      lastDeliveryAt: ack.now,
      closed: closing(context.closed, delivery, 'acknowledged', settled),
      recent: remember(
        context.recent,
        done.map(({ event, fate }) =>
          fateOf(delivery.events.find((d) => d.id === event.id) ?? event, fate, ack.now),
        ),
      ),
    },
  };
};

/** The lease ran out before an ack: every event of the delivery goes back with one more attempt. */
export const leaseExpired = (context: GateContext, delivery: Delivery): GateDecision => {
  const { settle, counters } = settling(context, delivery.leaseExpiresAt ?? 0, {
    failed: delivery.events.map(stripUrgency),
  });
  return {
    settle,
    changes: {
      ...counters,
      delivery: null,
      closed: closing(context.closed, delivery, 'expired'),
      lastError: `The lease of delivery ${delivery.deliveryId} expired: its events went back to the inbox.`,
    },
  };
};

/** The answer to an ack that cannot be taken: why, with its code. */
export const ackRefused = (context: GateContext, ack: Ack & Caller): GateDecision => {
  const { deliveryId, outcomes } = ack;
  const code =
    ackRejection(context.delivery, context.closed, deliveryId, outcomes, ack) ?? 'unknown_delivery';
  return answered(ack, {
    accepted: false,
    deliveryId,
    reason: rejectionReason(code, context.delivery, deliveryId, outcomes),
    code,
    consumed: [],
    putBack: [],
    deadLettered: [],
  });
};

/** The delivery out to `agent`, or null when none is or another agent holds it. */
export const heldDelivery = (context: Pick<GateContext, 'delivery'>, agent: string): Delivery | null =>
  context.delivery !== null && context.delivery.holder === agent ? context.delivery : null;

/** The answer to a claim: the delivery when this agent holds it, or whether another agent does. */
export const claimAnswered = (context: GateContext, claim: Claim): GateDecision => {
  const mine = heldDelivery(context, claim.agent);
  return answered(claim, { delivery: mine, heldByOther: context.delivery?.holder != null && mine === null });
};

/** Node timers hold at most 2^31 − 1 ms; a longer focus is waited out in steps. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Focus until `until` (null: none), as of `now`: whether it still holds, and when to look again
 * (its end, or one timer's length from now, whichever is first); null when it is over.
 */
export const focusStep = (
  until: number | null,
  now: number,
): { focusUntil: number | null; checkAt: number | null } =>
  until === null || until <= now
    ? { focusUntil: null, checkAt: null }
    : { focusUntil: until, checkAt: Math.min(until, now + MAX_TIMER_MS) };

/** A reflection was held back, and why: it runs once the gate opens. */
export const held = (context: GateContext, reason: HoldReason): Partial<GateContext> => ({
  deferred: true,
  lastGate: reason,
  gated: { ...context.gated, [reason]: context.gated[reason] + 1 },
});

/** The drained events are the batch the thinker judges next. */
export const batchTaken = (context: GateContext, { events, at }: DrainOutput): Partial<GateContext> => ({
  batch: events,
  reflectedAt: at,
  reflections: context.reflections + 1,
});
