import { assign, fromPromise, sendTo, setup } from 'xstate';
import type { ExternalItem, PolledSource, ToolSafety } from './external.js';
import type { OfferReply } from './inbox.js';

/**
 * The outcome of one call to a source's tool, with what its tool says of its side effects.
 * Failures are data: the effect never throws. A refusal (`refused`) is a tool that says it
 * writes or destroys, which was not called.
 */
export type FetchOutcome =
  | { ok: true; items: ExternalItem[]; tool?: ToolSafety; at: number; durationMs: number; jitter: number }
  | { ok: false; error: string; refused?: ToolSafety; at: number; durationMs: number; jitter: number };

export const RETRY_BASE_MS = 1_000;
export const RETRY_CAP_MS = 5 * 60_000;
/** How soon a source whose poll hit the cap is polled again. */
export const CATCH_UP_MS = 2_000;

/** Catching up is never slower than the source's own interval. */
const catchUpMs = (source: PolledSource): number => Math.min(CATCH_UP_MS, source.intervalMs);

/** Exponential backoff, capped, with jitter in [50%, 100%] of the step. */
export const pollRetryDelayMs = (failures: number, jitter: number): number =>
  Math.round(Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.max(0, failures - 1)) * (0.5 + jitter / 2));

export interface PollerContext {
  source: PolledSource;
  polls: number;
  failures: number;
  lastPollAt: number | null;
  nextPollAt: number | null;
  lastError: string | null;
  /** What the source's tool said of its side effects at the last poll that read it; null before. */
  tool: ToolSafety | null;
  jitter: number;
  /**
   * How long the last call took. The next poll waits a whole interval after it ends, so a server
   * never sees two calls closer than its interval, even when one call was slow to connect.
   */
  lastDurationMs: number;
  pending: ExternalItem[];
  lastListed: number;
  lastInserted: number;
  itemsInserted: number;
  catchUps: number;
}

export type PollerEvent = OfferReply | { type: 'poller.pollNow' };

/**
 * One source's schedule: polls at once on start, then every `interval_sec`; polls again soon
 * while a poll hits the per-tick cap (catching up), and backs off after failures.
 */
export const pollerMachine = setup({
  types: {
    context: {} as PollerContext,
    events: {} as PollerEvent,
    input: {} as { source: PolledSource },
  },
  actors: {
    fetchItems: fromPromise<FetchOutcome, PolledSource>(async () => {
      throw new Error('fetchItems not provided');
    }),
  },
  delays: {
    pollInterval: ({ context }) => context.source.intervalMs,
    catchUpDelay: ({ context }) => catchUpMs(context.source),
    retryDelay: ({ context }) => pollRetryDelayMs(context.failures, context.jitter),
  },
  guards: {
    fetchSucceeded: ({ event }) => 'output' in event && (event.output as FetchOutcome).ok,
    toolRefused: ({ event }) => {
      const outcome = 'output' in event ? (event.output as FetchOutcome) : null;
      return outcome !== null && !outcome.ok && outcome.refused !== undefined;
    },
    shouldCatchUp: ({ event }) => event.type === 'inbox.offered' && event.capped && event.roomLeft > 0,
  },
  actions: {
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
  context: ({ input }) => ({
    source: input.source,
    polls: 0,
    failures: 0,
    lastPollAt: null,
    nextPollAt: null,
    lastError: null,
    tool: null,
    jitter: 0,
    lastDurationMs: 0,
    pending: [],
    lastListed: 0,
    lastInserted: 0,
    itemsInserted: 0,
    catchUps: 0,
  }),
  initial: 'polling',
  states: {
    polling: {
      description: "Calling the source's tool, bounded by its server's timeout.",
      entry: assign(({ context }) => ({ polls: context.polls + 1, nextPollAt: null })),
      invoke: {
        src: 'fetchItems',
        input: ({ context }) => context.source,
        onDone: [
          {
            guard: 'toolRefused',
            target: 'refused',
            actions: assign(({ event }) => {
              const outcome = event.output;
              if (outcome.ok) return {};
              return {
                tool: outcome.refused ?? null,
                lastError: outcome.error,
                lastPollAt: outcome.at,
                lastDurationMs: outcome.durationMs,
              };
            }),
          },
          {
            guard: 'fetchSucceeded',
            target: 'offering',
            actions: assign(({ event }) => {
              const outcome = event.output;
              if (!outcome.ok) return {};
              return {
                pending: outcome.items,
                tool: outcome.tool ?? null,
                lastListed: outcome.items.length,
                lastPollAt: outcome.at,
                lastDurationMs: outcome.durationMs,
                jitter: outcome.jitter,
                failures: 0,
                lastError: null,
              };
            }),
          },
          {
            target: 'backingOff',
            actions: assign(({ context, event }) => {
              const outcome = event.output;
              if (outcome.ok) return {};
              const failures = context.failures + 1;
              return {
                failures,
                lastError: outcome.error,
                lastPollAt: outcome.at,
                lastDurationMs: outcome.durationMs,
                jitter: outcome.jitter,
                nextPollAt: outcome.at + outcome.durationMs + pollRetryDelayMs(failures, outcome.jitter),
              };
            }),
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
            guard: 'shouldCatchUp',
            target: 'catchingUp',
            actions: assign(({ context, event }) => ({
              pending: [],
              lastInserted: event.inserted,
              itemsInserted: context.itemsInserted + event.inserted,
              catchUps: context.catchUps + 1,
              nextPollAt: (context.lastPollAt ?? 0) + context.lastDurationMs + catchUpMs(context.source),
            })),
          },
          {
            target: 'waiting',
            actions: assign(({ context, event }) => ({
              pending: [],
              lastInserted: event.inserted,
              itemsInserted: context.itemsInserted + event.inserted,
              nextPollAt: (context.lastPollAt ?? 0) + context.lastDurationMs + context.source.intervalMs,
            })),
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
