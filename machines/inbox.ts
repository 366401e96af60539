import { type ActorRef, assign, enqueueActions, fromPromise, type Snapshot, setup } from 'xstate';
import { errorMessage } from './error-message.js';
import type { AlsoListed, ExternalItem, InboxEvent } from './external.js';

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

export const DEAD_LETTERS_KEPT = 50;
/** How many items listed again by another source the inbox keeps to show. */
export const ALSO_LISTED_KEPT = 20;

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

/** Puts `taken` back at the front in the order taken; over capacity, the put-back (older) ones go first. */
export const putBack = (
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
    /** New events were inserted: wakes the reflection gate, when the system has one. */
    wakeGate: enqueueActions(({ enqueue, system }) => {
      const gate = system.get('gate');
      const wake = { type: 'gate.reflect', reason: 'inserted' } as const;
      if (gate !== undefined) enqueue.sendTo(gate, wake);
    }),
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
    'inbox.offer': {
      actions: assign(({ context, event }) => ({
        offers: [
          ...context.offers,
          {
            pollId: event.pollId,
            source: event.source,
            server: event.server,
            items: event.items,
            replyTo: event.replyTo,
          },
        ],
      })),
    },
  },
  states: {
    loading: {
      description: 'Restoring the inbox from its journal; offers wait until it is back.',
      invoke: {
        src: 'loadInbox',
        onDone: {
          target: 'ready',
          // Events restored from the journal (out on a lease at a crash, or never reflected on) are worth a look.
          actions: enqueueActions(({ event, enqueue }) => {
            enqueue.assign({ events: event.output.events, deadLetters: event.output.deadLetters });
            if (event.output.events.length > 0) enqueue('wakeGate');
          }),
        },
        onError: {
          target: 'ready',
          actions: assign(({ event }) => ({
            lastError: `Could not restore the inbox: ${errorMessage(event.error)}`,
          })),
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
          actions: enqueueActions(({ context, event, enqueue }) => {
            if (event.type !== 'inbox.offer') return;
            const reply: OfferReply = {
              type: 'inbox.offered',
              pollId: event.pollId,
              inserted: 0,
              capped: false,
              roomLeft: Math.max(0, context.capacity - context.events.length),
            };
            enqueue.sendTo(event.replyTo, reply);
          }),
        },
        'inbox.drain': {
          actions: assign(({ context, event }) => ({
            events: [],
            out: [...context.out, ...context.events],
            lastDrain: { requestId: event.requestId, events: context.events },
          })),
        },
        'inbox.settle': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            const { type: _, ...settlement } = event;
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
            enqueue.assign({
              events,
              out: context.out.filter((e) => !settled.has(e.id)),
              dropped: context.dropped + dropped.length,
              deadLettered: context.deadLettered + deadLetters.length,
              deadLetters: [...context.deadLetters, ...deadLetters].slice(-DEAD_LETTERS_KEPT),
              unsaved: [...context.unsaved, { settlement, deadLetters }],
            });
          }),
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
                input: ({ context }) => {
                  const offer = context.offers[0]!;
                  const room = Math.max(0, context.capacity - context.events.length);
                  const held = [...context.events, ...context.out]
                    .filter((e) => e.source === offer.source)
                    .map((e) => e.item_id);
                  return {
                    source: offer.source,
                    server: offer.server,
                    items: offer.items,
                    limit: Math.min(context.perTickCap, room),
                    held,
                  };
                },
                onDone: {
                  target: 'idle',
                  actions: enqueueActions(({ context, event, enqueue }) => {
                    const [offer, ...rest] = context.offers;
                    const events = [...context.events, ...event.output.inserted];
                    enqueue.assign({
                      events,
                      offers: rest,
                      inserted: context.inserted + event.output.inserted.length,
                      alsoListed: [...context.alsoListed, ...(event.output.alsoListed ?? [])].slice(
                        -ALSO_LISTED_KEPT,
                      ),
                    });
                    const reply: OfferReply = {
                      type: 'inbox.offered',
                      pollId: offer!.pollId,
                      inserted: event.output.inserted.length,
                      capped: event.output.capped,
                      roomLeft: Math.max(0, context.capacity - events.length),
                    };
                    enqueue.sendTo(offer!.replyTo, reply);
                    if (event.output.inserted.length > 0) enqueue('wakeGate');
                  }),
                },
                onError: {
                  target: 'idle',
                  actions: enqueueActions(({ context, event, enqueue }) => {
                    const [offer, ...rest] = context.offers;
                    enqueue.assign({
                      offers: rest,
                      lastError: `Could not store new items: ${errorMessage(event.error)}`,
                    });
                    const reply: OfferReply = {
                      type: 'inbox.offered',
                      pollId: offer!.pollId,
                      inserted: 0,
                      capped: true,
                      roomLeft: 0,
                    };
                    enqueue.sendTo(offer!.replyTo, reply);
                  }),
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
                onDone: {
                  target: 'idle',
                  actions: assign(({ context }) => ({
                    unsaved: context.unsaved.slice(1),
                    settleSaved: Math.max(context.settleSaved, context.unsaved[0]!.settlement.seq),
                  })),
                },
                onError: {
                  target: 'idle',
                  actions: assign(({ context, event }) => {
                    const message = errorMessage(event.error);
                    return {
                      unsaved: context.unsaved.slice(1),
                      settleError: { seq: context.unsaved[0]!.settlement.seq, message },
                      lastError: `Could not record what happened to delivered events: ${message}`,
                    };
                  }),
                },
              },
            },
          },
        },
      },
    },
  },
});
