import { assign, fromPromise, sendTo, setup } from 'xstate';
import type { PolledSource } from './external.js';
import type { OfferReply } from './inbox-context.js';
import {
  type FetchOutcome,
  initialPollerContext,
  type PollerContext,
  type PollerEvent,
  type PollerInput,
} from './poller-context.js';
import * as decisions from './poller-decisions.js';

/**
 * One source's schedule: polls at once on start, then every `interval_sec`; polls again soon
 * while a poll hits the per-tick cap (catching up), and backs off after failures.
 */
export const pollerMachine = setup({
  types: {
    context: {} as PollerContext,
    events: {} as PollerEvent,
    input: {} as PollerInput,
  },
  actors: {
    fetchItems: fromPromise<FetchOutcome, PolledSource>(async () => {
      throw new Error('fetchItems not provided');
    }),
  },
  delays: {
    pollInterval: ({ context }) => context.source.intervalMs,
    catchUpDelay: ({ context }) => decisions.catchUpMs(context.source),
    retryDelay: ({ context }) => decisions.pollRetryDelayMs(context.failures, context.jitter),
  },
  guards: {
    fetchSucceeded: (_, { outcome }: { outcome: FetchOutcome }) => outcome.ok,
    toolRefused: (_, { outcome }: { outcome: FetchOutcome }) => decisions.isRefusal(outcome),
    shouldCatchUp: (_, { reply }: { reply: OfferReply }) => decisions.shouldCatchUp(reply),
  },
  actions: {
    startPoll: assign(({ context }) => ({ polls: context.polls + 1, nextPollAt: null })),
    recordPoll: assign(({ context }, { outcome }: { outcome: FetchOutcome }) =>
      decisions.polled(context, outcome),
    ),
    takeOfferReply: assign(({ context }, { reply }: { reply: OfferReply }) =>
      decisions.offerAnswered(context, reply),
    ),
    offer: sendTo(
      ({ system }) => system.get('inbox'),
      ({ context, self }) => ({
        type: 'inbox.offer' as const,
        pollId: context.polls,
        source: context.source.name,
        server: context.source.server,
        items: context.pending,
        replyTo: self,
      }),
    ),
  },
}).createMachine({
  id: 'poller',
  context: ({ input }) => initialPollerContext(input),
  initial: 'polling',
  states: {
    polling: {
      description: "Calling the source's tool, bounded by its server's timeout.",
      entry: 'startPoll',
      invoke: {
        src: 'fetchItems',
        input: ({ context }) => context.source,
        onDone: [
          {
            guard: { type: 'toolRefused', params: ({ event }) => ({ outcome: event.output }) },
            target: 'refused',
            actions: { type: 'recordPoll', params: ({ event }) => ({ outcome: event.output }) },
          },
          {
            guard: { type: 'fetchSucceeded', params: ({ event }) => ({ outcome: event.output }) },
            target: 'offering',
            actions: { type: 'recordPoll', params: ({ event }) => ({ outcome: event.output }) },
          },
          {
            target: 'backingOff',
            actions: { type: 'recordPoll', params: ({ event }) => ({ outcome: event.output }) },
          },
        ],
      },
    },
    offering: {
      description: 'Handing the listed items to the inbox, which keeps the unseen ones durably.',
      entry: 'offer',
      on: {
        'inbox.offered': [
          {
            guard: { type: 'shouldCatchUp', params: ({ event }) => ({ reply: event }) },
            target: 'catchingUp',
            actions: { type: 'takeOfferReply', params: ({ event }) => ({ reply: event }) },
          },
          {
            target: 'waiting',
            actions: { type: 'takeOfferReply', params: ({ event }) => ({ reply: event }) },
          },
        ],
      },
    },
    waiting: {
      description: 'Idle until the next interval.',
      after: { pollInterval: 'polling' },
      on: { 'poller.pollNow': 'polling' },
    },
    catchingUp: {
      description:
        'The last poll hit the per-tick cap: polling again soon so items do not scroll out of the source.',
      after: { catchUpDelay: 'polling' },
      on: { 'poller.pollNow': 'polling' },
    },
    refused: {
      description:
        "The source's tool says it writes or destroys (readOnlyHint: false or destructiveHint: true) and the source does not allow side effects: it was not called, and is not polled until sources.json changes.",
    },
    backingOff: {
      description: 'The last poll failed: waiting an exponentially growing, jittered delay before retrying.',
      after: { retryDelay: 'polling' },
      on: { 'poller.pollNow': 'polling' },
    },
  },
});
