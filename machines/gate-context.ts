import type {
  AckOutcome,
  Caller,
  ClosedDelivery,
  Delivery,
  GateAckRejection,
  RecentFate,
} from './delivery-rules.js';
import type { InboxEvent } from './external.js';
import { definedSettings, GATE_DEFAULTS, type GateInput, type GateSettings } from './gate-settings.js';
import type { Asking } from './reply.js';

/** The answer to one `gate.ack`, as `pulse_ack_events` returns it: an accepted one once the inbox has its settlement on disk. */
export interface GateAckAnswer {
  accepted: boolean;
  deliveryId: string;
  reason: string;
  code?: GateAckRejection;
  /** Event ids per fate; empty when refused. */
  consumed: string[];
  putBack: string[];
  deadLettered: string[];
}

/** The answer to one `gate.claim`: the delivery this agent holds now, if any. */
export interface ClaimAnswer {
  delivery: Delivery | null;
  /** Another agent holds the delivery that is out. */
  heldByOther: boolean;
}

/** Why a reflection was held back: a delivery out, the user's focus, a pending replan, or the cooldown. */
export type HoldReason = 'awaiting' | 'focus' | 'answering' | 'cooldown';

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

/**
 * What failed in a thought: the `answer` (unusable, or a server error on that one request), asked
 * again at the next reflection, for the next answer may well be good; or the `endpoint`
 * (unreachable, late, overloaded, refusing), backed off, for asking again soon only adds load.
 */
export type FailureKind = 'answer' | 'endpoint';

/** A failed thought: when, why in a few words, and when the gate asks the thinker again. */
export interface ThinkFailure {
  at: number;
  kind: FailureKind;
  /** e.g. `HTTP 500`, `no answer within 60 s`, `an answer without usable judgements`. */
  reason: string;
  /** How long the thinker's endpoint asked to be left alone (`Retry-After`), or null when it did not say. */
  retryAfterMs: number | null;
  /** When the backoff ends; new events end it sooner, unless a `Retry-After` holds. */
  retryAt: number;
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
  /** Failed thoughts since the last usable one. */
  failedInARow: number;
  /** The endpoint's failures in a row, since the last usable thought or failed answer: the backoff doubles with each. */
  endpointFailuresInARow: number;
  /** How many events the last failed thought had been given. */
  failedBatch: number;
  /** The last failed thought, while no usable one has come since. */
  lastFailure: ThinkFailure | null;
  lastThought: ThoughtRecord | null;
  gated: Record<HoldReason, number>;
  lastGate: HoldReason | null;
  /** Settlements sent to the inbox so far (the last one's `seq`). */
  settles: number;
  lastError: string | null;
}

/** An agent checking in for the delivery set aside for it. */
export type Claim = { now: number } & Caller & Asking<ClaimAnswer>;

/** An agent's acknowledgement of a delivery. */
export interface Ack extends Asking<GateAckAnswer> {
  deliveryId: string;
  /** Per event id; an event left out counts as told, and no outcomes at all means all told. */
  outcomes?: Record<string, AckOutcome>;
  now: number;
}

export type GateEvent =
  | { type: 'gate.reflect'; reason: 'inserted' | 'timer' | 'checkin' }
  | ({ type: 'gate.claim' } & Claim)
  | ({ type: 'gate.ack' } & Ack & Caller)
  | { type: 'gate.focus'; until: number | null; now: number }
  | { type: 'gate.focusEnded'; at: number }
  | { type: 'gate.configure'; settings: GateInput }
  | { type: 'replan.status'; pending: boolean };

/** What `drainInbox` resolves to: everything the inbox held, and when it was taken (the reflection's "now"). */
export interface DrainOutput {
  events: InboxEvent[];
  at: number;
}

/** The gate at start: the settings given over the defaults, nothing drained, nothing out. */
export const initialGateContext = (input: GateInput | undefined): GateContext => ({
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
  endpointFailuresInARow: 0,
  failedBatch: 0,
  lastFailure: null,
  lastThought: null,
  gated: { awaiting: 0, focus: 0, answering: 0, cooldown: 0 },
  lastGate: null,
  settles: 0,
  lastError: null,
});
