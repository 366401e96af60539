import type { InboxEvent } from './external.js';
import type {
  AcceptInput,
  AcceptOutput,
  DeadLetter,
  InboxContext,
  Offer,
  OfferReply,
  Settlement,
  SettlementWrite,
  UnsavedSettlement,
} from './inbox-context.js';
import { type Answering, type Asking, answerOf, failedInstead, type ReplyOut } from './reply.js';

/*
 * What each of the inbox's decisions does, as pure functions of its context: the inbox's named
 * actions apply them, so each can be read, tested and swapped on its own.
 */

/** How many recent dead letters the inbox keeps in view. */
const DEAD_LETTERS_KEPT = 50;
/** How many items listed again by another source the inbox keeps to show. */
const ALSO_LISTED_KEPT = 20;

/** A decision of the inbox: what changes in its context, and the answer to an offer or a request (null: none). */
export type InboxDecision = Answering<InboxContext>;

/** How many more events fit in the inbox. */
const roomLeft = (context: InboxContext, events: readonly InboxEvent[] = context.events): number =>
  Math.max(0, context.capacity - events.length);

/** The answer to one offer: how many of its items entered, whether more were left out, and the room left. */
const answer = (offer: Offer, inserted: number, capped: boolean, room: number): InboxDecision['reply'] => {
  const event: OfferReply = { type: 'inbox.offered', pollId: offer.pollId, inserted, capped, roomLeft: room };
  return { to: offer.replyTo, event };
};

/** Puts `taken` back at the front in the order taken; over capacity, the put-back (older) ones go first. */
const putBack = (
  queue: readonly InboxEvent[],
  taken: readonly InboxEvent[],
  capacity: number,
): { events: InboxEvent[]; dropped: InboxEvent[] } => {
  const present = new Set(queue.map((e) => e.id));
  const returning = taken.filter((e) => !present.has(e.id));
  // The queue alone never exceeds capacity (offers are bounded by the room), so only returning events overflow.
  const overflow = Math.max(0, returning.length + queue.length - capacity);
  return { events: [...returning.slice(overflow), ...queue], dropped: returning.slice(0, overflow) };
};

/** An offer of items all seen recently: answered at once, nothing entered and nothing to write. */
export const offerAllSeenAnswered = (context: InboxContext, offer: Offer): InboxDecision => ({
  changes: {},
  reply: answer(offer, 0, false, roomLeft(context)),
});

/** A drain: every queued event goes out with the gate, still the inbox's to dedupe against until settled. */
export const drained = (context: InboxContext, asking: Asking<InboxEvent[]>): InboxDecision => ({
  changes: { events: [], out: [...context.out, ...context.events] },
  reply: answerOf(asking, context.events),
});

/**
 * A settlement of the gate, taken: consumed events leave, put-back ones return to the front
 * (overflowing ones are dead letters too), and the settlement waits its turn to be written.
 */
export const settlementTaken = (
  context: InboxContext,
  settlement: Settlement,
  reply: ReplyOut | null,
): Partial<InboxContext> => {
  const { events, dropped } = putBack(context.events, settlement.putBack, context.capacity);
  const settled = new Set([
    ...settlement.consumed,
    ...settlement.putBack.map((e) => e.id),
    ...settlement.deadLettered.map((e) => e.id),
  ]);
  const at = new Date(settlement.at).toISOString();
  const deadLetters: DeadLetter[] = [
    ...settlement.deadLettered.map((e) => ({ at, reason: 'max_attempts' as const, event: e })),
    ...dropped.map((e) => ({ at, reason: 'overflow' as const, event: e })),
  ];
  return {
    events,
    out: context.out.filter((e) => !settled.has(e.id)),
    dropped: context.dropped + dropped.length,
    deadLettered: context.deadLettered + deadLetters.length,
    deadLetters: [...context.deadLetters, ...deadLetters].slice(-DEAD_LETTERS_KEPT),
    unsaved: [...context.unsaved, { settlement, deadLetters, reply }],
  };
};

/** What the acceptor is given for the oldest offer: at most the per-tick cap, bounded by the room, and the items held. */
export const acceptInput = (context: InboxContext): AcceptInput => {
  const offer = context.offers[0]!;
  const held = [...context.events, ...context.out]
    .filter((e) => e.source === offer.source)
    .map((e) => e.item_id);
  return {
    source: offer.source,
    server: offer.server,
    items: offer.items,
    limit: Math.min(context.perTickCap, roomLeft(context)),
    held,
  };
};

/** The oldest offer, written: its new events are queued and the poller told how many entered. */
export const offerAccepted = (context: InboxContext, output: AcceptOutput): InboxDecision => {
  const [offer, ...rest] = context.offers;
  const events = [...context.events, ...output.inserted];
  return {
    changes: {
      events,
      offers: rest,
      inserted: context.inserted + output.inserted.length,
      alsoListed: [...context.alsoListed, ...(output.alsoListed ?? [])].slice(-ALSO_LISTED_KEPT),
    },
    reply: answer(offer!, output.inserted.length, output.capped, roomLeft(context, events)),
  };
};

/** The oldest offer could not be written: nothing entered, and the poller is told it was capped with no room, so it waits. */
export const offerFailed = (context: InboxContext, message: string): InboxDecision => {
  const [offer, ...rest] = context.offers;
  return {
    changes: { offers: rest, lastError: `Could not store new items: ${message}` },
    reply: answer(offer!, 0, true, 0),
  };
};

/** The oldest unsaved settlement is on disk: the ack it records is answered now. */
export const settlementSaved = (context: InboxContext): InboxDecision => ({
  changes: {
    unsaved: context.unsaved.slice(1),
    settleSaved: Math.max(context.settleSaved, context.unsaved[0]!.settlement.seq),
  },
  reply: context.unsaved[0]!.reply,
});

/** The oldest unsaved settlement could not be written: recorded as failed, not tried again, and its ack told why. */
export const settlementFailed = (context: InboxContext, message: string): InboxDecision => {
  const { reply } = context.unsaved[0]!;
  return {
    changes: {
      unsaved: context.unsaved.slice(1),
      lastError: `Could not record what happened to delivered events: ${message}`,
    },
    reply:
      reply &&
      failedInstead(
        reply,
        `The ack was accepted but could not be written to inbox.jsonl: ${message}. Check that .pulse/ is writable.`,
      ),
  };
};

/** What the `persistSettlement` effect writes of an unsaved settlement: never its reply. */
export const writeOf = ({ settlement, deadLetters }: UnsavedSettlement): SettlementWrite => ({
  settlement,
  deadLetters,
});

/** The offer an `inbox.offer` carries. */
export const offerOf = ({ pollId, source, server, items, replyTo }: Offer): Offer => ({
  pollId,
  source,
  server,
  items,
  replyTo,
});

/** The settlement an `inbox.settle` carries. */
export const settlementOf = ({ seq, at, consumed, putBack, deadLettered }: Settlement): Settlement => ({
  seq,
  at,
  consumed,
  putBack,
  deadLettered,
});
