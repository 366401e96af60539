import {
  type ActorRef,
  type AnyActorRef,
  assign,
  enqueueActions,
  fromPromise,
  type Snapshot,
  setup,
} from 'xstate';
import { errorMessage } from './error-message.js';
import type { AlsoListed, ExternalItem, InboxEvent } from './external.js';
import * as decisions from './inbox-decisions.js';

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
  lastDrain: { requestId: number; events: InboxEvent[] } | null;
  /** The most recent dead letters (the file keeps them all). */
  deadLetters: DeadLetter[];
  /** The most recent items a second source of a server listed, told once under the first. */
  alsoListed: AlsoListed[];
  deadLettered: number;
  /** Settlements taken and not written yet, oldest first: written one at a time, in order. */
  unsaved: SettlementWrite[];
  /** The highest settlement known to be on disk, and the last one that could not be written. */
  settleSaved: number;
  settleError: { seq: number; message: string } | null;
  lastError: string | null;
}

export type InboxEventMessage =
  | ({ type: 'inbox.offer' } & Offer)
  | { type: 'inbox.drain'; requestId: number }
  | ({ type: 'inbox.settle' } & Settlement);

/** The offer an `inbox.offer` carries. */
const offerOf = ({ pollId, source, server, items, replyTo }: Offer): Offer => ({
  pollId,
  source,
  server,
  items,
  replyTo,
});

/** The settlement an `inbox.settle` carries. */
const settlementOf = ({ seq, at, consumed, putBack, deadLettered }: Settlement): Settlement => ({
  seq,
  at,
  consumed,
  putBack,
  deadLettered,
});

/** What applying a decision needs of an action's arguments. */
interface DecisionArgs {
  enqueue: { assign(changes: Partial<InboxContext>): void; sendTo(to: AnyActorRef, event: OfferReply): void };
}

/** Applies a decision: its changes to the context, and its answer to the poller. */
const apply = ({ enqueue }: DecisionArgs, { changes, reply }: decisions.InboxDecision): void => {
  enqueue.assign(changes);
  if (reply !== null) enqueue.sendTo(reply.to, reply.answer);
};

/**
 * The durable inbox and the only writer of its files: takes offers from pollers one at a time
 * (written before they count as inserted, marked seen after), is drained whole by a reflection,
 * and records each of the gate's settlements: consumed events leave, undelivered ones come back
 * at the front, and dead letters are kept in view. Every drop is recorded, never silent. An item
 * it holds (queued, or out with the gate until settled) never enters a second time, whatever the
 * seen store says.
 */
export const inboxMachine = setup({
  types: {
    context: {} as InboxContext,
    events: {} as InboxEventMessage,
    input: {} as { capacity?: number; perTickCap?: number } | undefined,
  },
  actors: {
    loadInbox: fromPromise<LoadedInbox>(async () => {
      throw new Error('loadInbox not provided');
    }),
    acceptItems: fromPromise<AcceptOutput, AcceptInput>(async () => {
      throw new Error('acceptItems not provided');
    }),
    /** Writes one settlement and the dead letters it made durably (journal and dead letters); provided by the wiring. */
    persistSettlement: fromPromise<void, SettlementWrite>(async () => {
      throw new Error('persistSettlement not provided');
    }),
  },
  actions: {
    /** Wakes the reflection gate (when the system has one) for `inserted` new events; none, no wake-up. */
    wakeGate: enqueueActions(({ enqueue, system }, { inserted }: { inserted: number }) => {
      const gate = system.get('gate');
      const wake = { type: 'gate.reflect', reason: 'inserted' } as const;
      if (inserted > 0 && gate !== undefined) enqueue.sendTo(gate, wake);
    }),
    restore: assign((_, { events, deadLetters }: LoadedInbox) => ({ events, deadLetters })),
    noteLoadError: assign((_, { message }: { message: string }) => ({
      lastError: `Could not restore the inbox: ${message}`,
    })),
    queueOffer: assign(({ context }, { offer }: { offer: Offer }) => ({
      offers: [...context.offers, offer],
    })),
    answerSeenOffer: enqueueActions((args, { offer }: { offer: Offer }) =>
      apply(args, decisions.offerAllSeenAnswered(args.context, offer)),
    ),
    drain: assign(({ context }, { requestId }: { requestId: number }) =>
      decisions.drained(context, requestId),
    ),
    takeSettlement: assign(({ context }, { settlement }: { settlement: Settlement }) =>
      decisions.settlementTaken(context, settlement),
    ),
    takeAccepted: enqueueActions((args, { output }: { output: AcceptOutput }) =>
      apply(args, decisions.offerAccepted(args.context, output)),
    ),
    dropFailedOffer: enqueueActions((args, { message }: { message: string }) =>
      apply(args, decisions.offerFailed(args.context, message)),
    ),
    markSettlementSaved: assign(({ context }) => decisions.settlementSaved(context)),
    markSettlementFailed: assign(({ context }, { message }: { message: string }) =>
      decisions.settlementFailed(context, message),
    ),
  },
  guards: {
    hasOffers: ({ context }) => context.offers.length > 0,
    hasUnsaved: ({ context }) => context.unsaved.length > 0,
    /**
     * Every item of the offer was seen before and its mark is recent, so taking it would write
     * nothing (a mark older than a day is written again when its item is listed). The wiring
     * provides the check against the seen store (in memory, read-only); without it, every offer
     * is queued and written.
     */
    offerAllSeen: (_: { event: InboxEventMessage }) => false,
  },
}).createMachine({
  id: 'inbox',
  context: ({ input }) => ({
    events: [],
    out: [],
    capacity: input?.capacity ?? INBOX_CAPACITY,
    perTickCap: input?.perTickCap ?? PER_TICK_CAP,
    offers: [],
    dropped: 0,
    inserted: 0,
    lastDrain: null,
    deadLetters: [],
    deadLettered: 0,
    alsoListed: [],
    unsaved: [],
    settleSaved: 0,
    settleError: null,
    lastError: null,
  }),
  initial: 'loading',
  on: {
    'inbox.offer': { actions: { type: 'queueOffer', params: ({ event }) => ({ offer: offerOf(event) }) } },
  },
  states: {
    loading: {
      description: 'Restoring the inbox from its journal; offers wait until it is back.',
      invoke: {
        src: 'loadInbox',
        onDone: {
          target: 'ready',
          // Events restored from the journal (out on a lease at a crash, or never reflected on) are worth a look.
          actions: [
            { type: 'restore', params: ({ event }) => event.output },
            { type: 'wakeGate', params: ({ event }) => ({ inserted: event.output.events.length }) },
          ],
        },
        onError: {
          target: 'ready',
          actions: { type: 'noteLoadError', params: ({ event }) => ({ message: errorMessage(event.error) }) },
        },
      },
    },
    ready: {
      description:
        'The inbox is restored: drains and settlements are taken at once, and an offer of items all seen recently is answered at once, having nothing to write. Other offers and the settlements are written each in their own region.',
      type: 'parallel',
      on: {
        'inbox.offer': {
          guard: 'offerAllSeen',
          actions: { type: 'answerSeenOffer', params: ({ event }) => ({ offer: offerOf(event) }) },
        },
        'inbox.drain': {
          actions: { type: 'drain', params: ({ event }) => ({ requestId: event.requestId }) },
        },
        'inbox.settle': {
          actions: { type: 'takeSettlement', params: ({ event }) => ({ settlement: settlementOf(event) }) },
        },
      },
      states: {
        offers: {
          description: "Pollers' offers, written one at a time in the order they came.",
          initial: 'idle',
          states: {
            idle: {
              description: 'No offer is being written; a queued offer starts at once.',
              always: { guard: 'hasOffers', target: 'accepting' },
            },
            accepting: {
              description:
                'Writing one offer durably: new items (neither held nor seen) go to the journal first, then they and the items listed again are marked seen.',
              invoke: {
                src: 'acceptItems',
                input: ({ context }) => decisions.acceptInput(context),
                onDone: {
                  target: 'idle',
                  actions: [
                    { type: 'takeAccepted', params: ({ event }) => ({ output: event.output }) },
                    { type: 'wakeGate', params: ({ event }) => ({ inserted: event.output.inserted.length }) },
                  ],
                },
                onError: {
                  target: 'idle',
                  actions: {
                    type: 'dropFailedOffer',
                    params: ({ event }) => ({ message: errorMessage(event.error) }),
                  },
                },
              },
            },
          },
        },
        settlements: {
          description:
            "The gate's settlements, written one at a time in the order decided: an ack is answered once its own is written (`settleSaved`).",
          initial: 'idle',
          states: {
            idle: {
              description: 'Every settlement taken is written, or could not be; a new one starts at once.',
              always: { guard: 'hasUnsaved', target: 'persisting' },
            },
            persisting: {
              description:
                'Writing the oldest settlement not yet written: its dead letters first, then one journal append. One that cannot be written is recorded as failed (`settleError`), not tried again, and the next one is written after it.',
              invoke: {
                src: 'persistSettlement',
                input: ({ context }) => context.unsaved[0]!,
                onDone: { target: 'idle', actions: 'markSettlementSaved' },
                onError: {
                  target: 'idle',
                  actions: {
                    type: 'markSettlementFailed',
                    params: ({ event }) => ({ message: errorMessage(event.error) }),
                  },
                },
              },
            },
          },
        },
      },
    },
  },
});
