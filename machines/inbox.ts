import { assign, enqueueActions, fromPromise, setup } from 'xstate';
import { errorMessage } from './error-message.js';
import type { InboxEvent } from './external.js';
import {
  type AcceptInput,
  type AcceptOutput,
  type InboxContext,
  type InboxEventMessage,
  type InboxInput,
  initialInboxContext,
  type LoadedInbox,
  type Offer,
  type SettleEvent,
  type SettlementWrite,
} from './inbox-context.js';
import * as decisions from './inbox-decisions.js';
import { offerOf, settlementOf } from './inbox-decisions.js';
import { type Asking, applyAnswering } from './reply.js';

const apply = applyAnswering<InboxContext>;

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
    input: {} as InboxInput,
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
    drain: enqueueActions((args, asking: Asking<InboxEvent[]>) =>
      apply(args, decisions.drained(args.context, asking)),
    ),
    takeSettlement: assign(({ context }, event: SettleEvent) =>
      decisions.settlementTaken(context, settlementOf(event), event.reply),
    ),
    takeAccepted: enqueueActions((args, { output }: { output: AcceptOutput }) =>
      apply(args, decisions.offerAccepted(args.context, output)),
    ),
    dropFailedOffer: enqueueActions((args, { message }: { message: string }) =>
      apply(args, decisions.offerFailed(args.context, message)),
    ),
    markSettlementSaved: enqueueActions((args) => apply(args, decisions.settlementSaved(args.context))),
    markSettlementFailed: enqueueActions((args, { message }: { message: string }) =>
      apply(args, decisions.settlementFailed(args.context, message)),
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
  context: ({ input }) => initialInboxContext(input),
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
        'inbox.drain': { actions: { type: 'drain', params: ({ event }) => event } },
        'inbox.settle': { actions: { type: 'takeSettlement', params: ({ event }) => event } },
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
            "The gate's settlements, written one at a time in the order decided: an ack is answered once its own is written.",
          initial: 'idle',
          states: {
            idle: {
              description: 'Every settlement taken is written, or could not be; a new one starts at once.',
              always: { guard: 'hasUnsaved', target: 'persisting' },
            },
            persisting: {
              description:
                'Writing the oldest settlement not yet written: its dead letters first, then one journal append. One that cannot be written is recorded as failed and its ack told why, not tried again, and the next one is written after it.',
              invoke: {
                src: 'persistSettlement',
                input: ({ context }) => decisions.writeOf(context.unsaved[0]!),
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
