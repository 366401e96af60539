import type { InboxEvent } from './external.js';

/** What a thinker says about one event: how urgent it is, 0..1, and, from a model, why in a few words. */
export interface Judgement {
  id: string;
  urgency: number;
  why?: string;
}

/** One thought: the judgements, and which thinker made them (with a note when it was not the one configured). */
export interface Thought {
  judgements: Judgement[];
  /** e.g. `rules`, `model qwen2.5:7b-instruct`, `sampling (claude-code)`. */
  by: string;
  /** Why another thinker than the configured one judged, e.g. no client offers sampling. */
  note: string | null;
  /** When the thinker answered (ms since the epoch), when it says; else the reflection's time counts. */
  at?: number;
}

/** What the agent reports per delivered event. */
export type AckOutcome = 'told' | 'not_worth_saying' | 'later';

export type DeliveredEvent = InboxEvent & { urgency: number; why?: string };

/**
 * Urgent events set aside for the agents. `holder` is null until an agent checks in and claims
 * it; the lease runs from that claim, so events never count an attempt while no agent is there.
 */
export interface Delivery {
  deliveryId: string;
  events: DeliveredEvent[];
  holder: string | null;
  /** The MCP session the holder claimed it from, if it had one: an ack from there is the holder's too. */
  holderSession: string | null;
  leaseExpiresAt: number | null;
}

/** Who sends a claim or an ack: the identity it checks in as, and its MCP session if it has one. */
export interface Caller {
  agent: string;
  session?: string | null;
}

/** Why an ack was refused: a stable code beside the sentence. */
export type GateAckRejection =
  | 'unknown_delivery'
  | 'already_acknowledged'
  | 'lease_expired'
  | 'not_holder'
  | 'unknown_event';

/**
 * Whether `caller` is the agent a delivery is out to: the same identity (agent name, session, or
 * the one-shot callers' shared one), or the very session that claimed it under a name.
 */
export const isHolder = (delivery: Delivery, caller: Caller): boolean =>
  caller.agent === delivery.holder || (caller.session != null && caller.session === delivery.holderSession);

/** A delivery no longer out, kept to tell a duplicate or late ack from an unknown one. */
export interface ClosedDelivery {
  deliveryId: string;
  how: 'acknowledged' | 'expired';
  /** With an ack: the events consumed, put back and dead-lettered by it. */
  settled?: SettledIds;
}

/** The ids of the events an ack consumed, put back and dead-lettered. */
export interface SettledIds {
  consumed: string[];
  putBack: string[];
  deadLettered: string[];
}

/** What happened to an event, most recent last, for the context resource. */
export type Fate = 'delivered' | 'told' | 'not_worth_saying' | 'below_threshold';

export interface RecentFate {
  event: InboxEvent;
  fate: Fate;
  at: number;
  /** The thinker's reason, when it gave one. */
  why?: string;
}

/** How many recent fates the gate keeps, and how many closed deliveries. */
export const RECENT_KEPT = 20;
const CLOSED_KEPT = 20;

/** A recent fate, with the thinker's reason when the event carries one. */
export const fateOf = (event: InboxEvent | DeliveredEvent, fate: Fate, at: number): RecentFate => {
  const why = 'why' in event ? event.why : undefined;
  const plain = 'urgency' in event ? stripUrgency(event) : event;
  return why === undefined ? { event: plain, fate, at } : { event: plain, fate, at, why };
};

/** The recent fates with `fates` after them: the last `RECENT_KEPT`. */
export const remember = (recent: readonly RecentFate[], fates: readonly RecentFate[]): RecentFate[] =>
  [...recent, ...fates].slice(-RECENT_KEPT);

/** The closed deliveries with `delivery` closed `how` after them: the last `CLOSED_KEPT`. */
export const closing = (
  closed: readonly ClosedDelivery[],
  delivery: Delivery,
  how: ClosedDelivery['how'],
  settled?: SettledIds,
): ClosedDelivery[] =>
  [...closed, { deliveryId: delivery.deliveryId, how, ...(settled === undefined ? {} : { settled }) }].slice(
    -CLOSED_KEPT,
  );

/** The judgements of an answer that count, by event id: an id and a finite urgency; the last one per id wins. */
const validJudgements = (answer: readonly Judgement[]): Map<string, Judgement> => {
  const judged = new Map<string, Judgement>();
  for (const j of Array.isArray(answer) ? answer : []) {
    if (typeof j?.id === 'string' && typeof j.urgency === 'number' && Number.isFinite(j.urgency)) {
      judged.set(j.id, j);
    }
  }
  return judged;
};

/** Whether an answer judges any event of the batch: one that judges none is a failed thought. */
export const judgesAny = (batch: readonly InboxEvent[], answer: readonly Judgement[]): boolean => {
  const judged = validJudgements(answer);
  return batch.some((event) => judged.has(event.id));
};

/** Where each drained event goes after a thought: spoken, consumed silently, or retried. */
export const judge = (
  batch: readonly InboxEvent[],
  answer: readonly Judgement[],
  threshold: number,
): { speak: DeliveredEvent[]; quiet: DeliveredEvent[]; retry: InboxEvent[] } => {
  const judged = validJudgements(answer);
  const speak: DeliveredEvent[] = [];
  const quiet: DeliveredEvent[] = [];
  const retry: InboxEvent[] = [];
  for (const event of batch) {
    const j = judged.get(event.id);
    if (j === undefined) {
      retry.push(event);
      continue;
    }
    const verdict = { ...event, urgency: j.urgency, ...(typeof j.why === 'string' ? { why: j.why } : {}) };
    (j.urgency >= threshold ? speak : quiet).push(verdict);
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

export const stripUrgency = ({ urgency: _, why: _why, ...event }: DeliveredEvent): InboxEvent => event;

/** Why `caller`'s ack of `deliveryId` with these outcomes cannot be taken, or null when it can. */
export const ackRejection = (
  delivery: Delivery | null,
  closed: readonly ClosedDelivery[],
  deliveryId: string,
  outcomes: Record<string, AckOutcome> | undefined,
  caller: Caller,
): GateAckRejection | null => {
  if (delivery === null || delivery.holder === null || delivery.deliveryId !== deliveryId) {
    const found = closed.find((c) => c.deliveryId === deliveryId);
    if (found === undefined) return 'unknown_delivery';
    return found.how === 'acknowledged' ? 'already_acknowledged' : 'lease_expired';
  }
  if (!isHolder(delivery, caller)) return 'not_holder';
  const ids = new Set(delivery.events.map((e) => e.id));
  if (Object.keys(outcomes ?? {}).some((id) => !ids.has(id))) return 'unknown_event';
  return null;
};

/** The sentence beside a rejection code: what happened and what the agent may do now. */
export const rejectionReason = (
  code: GateAckRejection,
  delivery: Delivery | null,
  deliveryId: string,
  outcomes: Record<string, AckOutcome> | undefined,
): string => {
  const current =
    delivery?.holder != null
      ? ` The delivery out now is ${delivery.deliveryId}.`
      : ' No delivery is out now; call pulse_should_interrupt for the next one.';
  switch (code) {
    case 'unknown_delivery':
      return `Delivery ${deliveryId} is not known.${current}`;
    case 'already_acknowledged':
      return `Delivery ${deliveryId} was already acknowledged; its events will not be delivered again.${current}`;
    case 'lease_expired':
      return `The lease of delivery ${deliveryId} expired before this ack; its events went back to the inbox and will be delivered again.${current}`;
    case 'not_holder':
      return `Delivery ${deliveryId} is out to ${delivery!.holder}, not to you: only the agent that received it may acknowledge it, from the same MCP session or with the same agent name it gave pulse_should_interrupt.`;
    case 'unknown_event': {
      const events = delivery!.events;
      const unknown = Object.keys(outcomes ?? {}).filter((id) => !events.some((e) => e.id === id));
      return `Delivery ${deliveryId} has no event ${unknown.join(', ')}. Its events: ${events.map((e) => e.id).join(', ')}.`;
    }
  }
};

/** Splits a delivery by the agent's outcomes: `later` goes back, the rest is dealt with (an event left out counts as told). */
export const splitOutcomes = (
  delivery: Delivery,
  outcomes: Record<string, AckOutcome> | undefined,
): { done: Array<{ event: InboxEvent; fate: 'told' | 'not_worth_saying' }>; later: InboxEvent[] } => {
  const done: Array<{ event: InboxEvent; fate: 'told' | 'not_worth_saying' }> = [];
  const later: InboxEvent[] = [];
  for (const delivered of delivery.events) {
    const outcome = outcomes?.[delivered.id] ?? 'told';
    const event = stripUrgency(delivered);
    if (outcome === 'later') later.push(event);
    else done.push({ event, fate: outcome });
  }
  return { done, later };
};
