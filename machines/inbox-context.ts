import type { ActorRef, Snapshot } from 'xstate';
import type { AlsoListed, ExternalItem, InboxEvent } from './external.js';
import type { Asking, ReplyOut } from './reply.js';

export const INBOX_CAPACITY = 200;
export const PER_TICK_CAP = 20;

/** What a poller offers after one poll. */
export interface Offer {
  pollId: number;
  source: string;
  /** The server the source polls: an item another source of it listed first is not new. */
  server: string;
  items: ExternalItem[];
  replyTo: ActorRef<Snapshot<unknown>, OfferReply>;
}

/** The inbox's answer to an offer. */
export interface OfferReply {
  type: 'inbox.offered';
  pollId: number;
  inserted: number;
  /** More unseen items were listed than the per-tick cap or the room let in. */
  capped: boolean;
  roomLeft: number;
}

export interface AcceptInput {
  source: string;
  server: string;
  items: ExternalItem[];
  /** How many may enter now: the per-tick cap, bounded by the room left. */
  limit: number;
  /** Item ids of this source the inbox holds (queued, or out with the gate): listed again, they do not enter again. */
  held: string[];
}

export interface AcceptOutput {
  inserted: InboxEvent[];
  capped: boolean;
  /** Items another source of the server listed first: not inserted, said in the context. */
  alsoListed?: AlsoListed[];
}

/** An event that left the inbox without being dealt with: out of attempts, or pushed out at capacity. */
export interface DeadLetter {
  at: string;
  reason: 'overflow' | 'max_attempts';
  event: InboxEvent;
}

/**
 * What the gate decided about events it took: consumed for good, put back at the front (with
 * their new attempt counts), or out of attempts. `seq` rises by one per settlement, so a
 * request can wait until its own is on disk.
 */
export interface Settlement {
  seq: number;
  /** When it was decided (ms since the epoch): the dead letters' time. */
  at: number;
  consumed: string[];
  putBack: InboxEvent[];
  deadLettered: InboxEvent[];
}

/** A settlement as the `persistSettlement` effect writes it: with the dead letters it made (overflow included). */
export interface SettlementWrite {
  settlement: Settlement;
  deadLetters: DeadLetter[];
}

/** What `loadInbox` restores. */
export interface LoadedInbox {
  events: InboxEvent[];
  deadLetters: DeadLetter[];
}

export interface InboxContext {
  events: InboxEvent[];
  /** Events drained and not settled yet: out with the gate, still the inbox's to dedupe against. */
  out: InboxEvent[];
  capacity: number;
  perTickCap: number;
  offers: Offer[];
  dropped: number;
  inserted: number;
  /** The most recent dead letters (the file keeps them all). */
  deadLetters: DeadLetter[];
  /** The most recent items a second source of a server listed, told once under the first. */
  alsoListed: AlsoListed[];
  deadLettered: number;
  /** Settlements taken and not written yet, oldest first, each with the ack it answers once written. */
  unsaved: UnsavedSettlement[];
  /** The highest settlement known to be on disk. */
  settleSaved: number;
  lastError: string | null;
}

/** A settlement waiting to be written, and the reply of the ack it records (null: no ack asked). */
export interface UnsavedSettlement extends SettlementWrite {
  reply: ReplyOut | null;
}

/** The gate's settlement; an ack's reply travels with it, to be sent once it is on disk. */
export type SettleEvent = { type: 'inbox.settle'; reply: ReplyOut | null } & Settlement;

export type InboxEventMessage =
  | ({ type: 'inbox.offer' } & Offer)
  | ({ type: 'inbox.drain' } & Asking<InboxEvent[]>)
  | SettleEvent;

/** The inbox's input: its bounds, the defaults where none is given. */
export type InboxInput = { capacity?: number; perTickCap?: number } | undefined;

/** The inbox's context at start: empty, with the bounds its input sets. */
export const initialInboxContext = (input: InboxInput): InboxContext => ({
  events: [],
  out: [],
  capacity: input?.capacity ?? INBOX_CAPACITY,
  perTickCap: input?.perTickCap ?? PER_TICK_CAP,
  offers: [],
  dropped: 0,
  inserted: 0,
  deadLetters: [],
  deadLettered: 0,
  alsoListed: [],
  unsaved: [],
  settleSaved: 0,
  lastError: null,
});
