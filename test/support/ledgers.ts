import type { CheckIn, Decision, EventsAck } from './protocol.js';

// What the daemons answered across all their lives, kept by a crash test so that each restart
// can be held to it. Only answers that arrived count: a call cut off by a kill promised nothing.

const maxId = (ids: Iterable<string>): string | null => {
  let max: string | null = null;
  for (const id of ids) if (max === null || id > max) max = id;
  return max;
};

/** The replan side: pending events seen, acks sent and acks answered `accepted`. */
export class ReplanLedger {
  readonly accepted: string[] = [];
  readonly sent = new Set<string>();
  /** Every event id an answer named: each must be in the log after a restart. */
  readonly answeredIds = new Set<string>();
  lastPendingSeen: string | null = null;
  acceptedCount = 0;
  refusedCount = 0;

  /** Records an answer of `pulse_should_interrupt`; returns its pending event id, if any. */
  observe(answer: Decision): string | null {
    if (answer.latest_event_id) this.answeredIds.add(answer.latest_event_id);
    const pending = answer.needs_replan ? answer.pending_replan_event_id : null;
    if (pending === null) return null;
    this.answeredIds.add(pending);
    if (this.lastPendingSeen === null || pending > this.lastPendingSeen) this.lastPendingSeen = pending;
    return pending;
  }

  /** Sends an ack through `send` and records what came back; only a durable ack must survive a kill. */
  async ack(eventId: string, send: () => Promise<{ accepted: boolean; durable?: boolean }>): Promise<void> {
    this.sent.add(eventId);
    const reply = await send();
    if (reply.accepted && reply.durable !== false) {
      this.accepted.push(eventId);
      this.acceptedCount++;
    } else {
      this.refusedCount++;
    }
  }

  /**
   * What a restarted daemon broke of the promises: an accepted ack lost or replaced by an older
   * one, a pending replan gone, `state.json` disagreeing, an answered event missing from the log.
   */
  problems(
    answer: Decision,
    state: Record<string, unknown> | null,
    loggedIds: ReadonlySet<string>,
  ): string[] {
    const problems: string[] = [];
    const missing = [...this.answeredIds].filter((id) => !loggedIds.has(id));
    if (missing.length > 0) problems.push(`answered event ids missing from the log: ${missing.join(', ')}`);
    const ack = answer.last_acknowledged_event_id;
    const lastAccepted = maxId(this.accepted);
    if (lastAccepted !== null && (ack === null || ack < lastAccepted)) {
      problems.push(`ack lost: ${lastAccepted} was accepted, the daemon now says ${ack}`);
    }
    if (ack !== null && !this.sent.has(ack)) problems.push(`acknowledged ${ack}, an id no one acked`);
    if (state !== null && state.last_acknowledged_event_id !== ack) {
      problems.push(`state.json says ${state.last_acknowledged_event_id}, the daemon says ${ack}`);
    }
    const pending = this.lastPendingSeen;
    if (pending !== null && (ack === null || ack < pending) && !answer.needs_replan) {
      problems.push(`pending replan ${pending} was lost (ack is ${ack})`);
    }
    return problems;
  }
}

/** The delivery side: events delivered, acks whose answer said `consumed`, and acks a kill cut off. */
export class DeliveryLedger {
  /** Item id of every event id delivered. */
  readonly itemOf = new Map<string, string>();
  readonly consumed = new Set<string>();
  /** Sent in an ack whose answer never came: consumed or not, the kill decided. */
  readonly unknown = new Set<string>();
  readonly problems: string[] = [];
  deliveries = 0;
  acceptedAcks = 0;
  refusedAcks = 0;

  /** Records a check-in's delivery; an event acknowledged as consumed must never come again. */
  delivered(answer: CheckIn, where: string): void {
    if (!answer.needs_attention) return;
    this.deliveries++;
    for (const event of answer.external_events) {
      this.itemOf.set(event.id, event.item_id);
      this.unknown.delete(event.id);
      if (this.consumed.has(event.id)) {
        this.problems.push(`${where}: ${event.id} (${event.item_id}) was acknowledged, and came again`);
      }
    }
  }

  /** Sends an ack through `send` (outcome `later` for the ids in `later`) and records what came back. */
  async ack(eventIds: readonly string[], later: ReadonlySet<string>, send: () => Promise<EventsAck>) {
    const told = eventIds.filter((id) => !later.has(id));
    for (const id of told) this.unknown.add(id);
    const reply = await send();
    for (const id of told) this.unknown.delete(id);
    if (reply.accepted) {
      this.acceptedAcks++;
      for (const id of reply.consumed) this.consumed.add(id);
    } else {
      this.refusedAcks++;
    }
    return reply;
  }

  /**
   * Items the daemon recorded as seen that are nowhere: not consumed by an ack (or maybe, by one
   * a kill cut off), not in the inbox, not dead-lettered.
   */
  lost(seenItems: Iterable<string>, liveItems: Iterable<string>, deadItems: Iterable<string>): string[] {
    const accounted = new Set([...liveItems, ...deadItems]);
    for (const id of [...this.consumed, ...this.unknown]) accounted.add(this.itemOf.get(id)!);
    return [...seenItems].filter((item) => !accounted.has(item));
  }
}
