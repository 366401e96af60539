import type { PolledSource } from './external.js';
import type { OfferReply } from './inbox-context.js';
import type { FetchOutcome, PollerContext } from './poller-context.js';

/*
 * What each of the poller's decisions does, as pure functions of its context: its named actions
 * apply them, so each can be read, tested and swapped on its own.
 */

/** The first backoff after a failed poll; each failure in a row doubles it, up to `RETRY_CAP_MS`. */
export const RETRY_BASE_MS = 1_000;
const RETRY_CAP_MS = 5 * 60_000;
/** How soon a source whose poll hit the cap is polled again. */
export const CATCH_UP_MS = 2_000;

/** Catching up is never slower than the source's own interval. */
export const catchUpMs = (source: PolledSource): number => Math.min(CATCH_UP_MS, source.intervalMs);

/** Exponential backoff, capped, with jitter in [50%, 100%] of the step. */
export const pollRetryDelayMs = (failures: number, jitter: number): number =>
  Math.round(Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.max(0, failures - 1)) * (0.5 + jitter / 2));

/** Whether the tool was not called because it says it writes or destroys. */
export const isRefusal = (outcome: FetchOutcome): boolean => !outcome.ok && outcome.refused !== undefined;

/**
 * One poll's outcome, recorded: a listing waits to be offered and ends the failures in a row; a
 * tool refused for its side effects keeps what it says of them; a failure counts one more in a
 * row, and the next poll is due after the backoff, counted from the call's end.
 */
export const polled = (context: PollerContext, outcome: FetchOutcome): Partial<PollerContext> => {
  const call = { lastPollAt: outcome.at, lastDurationMs: outcome.durationMs };
  if (outcome.ok)
    return {
      ...call,
      pending: outcome.items,
      tool: outcome.tool ?? null,
      lastListed: outcome.items.length,
      jitter: outcome.jitter,
      failures: 0,
      lastError: null,
    };
  if (outcome.refused !== undefined) return { ...call, tool: outcome.refused, lastError: outcome.error };
  const failures = context.failures + 1;
  return {
    ...call,
    failures,
    lastError: outcome.error,
    jitter: outcome.jitter,
    nextPollAt: outcome.at + outcome.durationMs + pollRetryDelayMs(failures, outcome.jitter),
  };
};

/** Whether the inbox's answer calls for catching up: the poll hit the cap and there is room for more. */
export const shouldCatchUp = (reply: OfferReply): boolean => reply.capped && reply.roomLeft > 0;

/**
 * The inbox answered the offer: the items are handed over, counted, and the next poll is due a
 * whole wait after the call ended: the catch-up delay when catching up, else the interval.
 */
export const offerAnswered = (context: PollerContext, reply: OfferReply): Partial<PollerContext> => {
  const catchingUp = shouldCatchUp(reply);
  const wait = catchingUp ? catchUpMs(context.source) : context.source.intervalMs;
  return {
    pending: [],
    lastInserted: reply.inserted,
    itemsInserted: context.itemsInserted + reply.inserted,
    catchUps: context.catchUps + (catchingUp ? 1 : 0),
    nextPollAt: (context.lastPollAt ?? 0) + context.lastDurationMs + wait,
  };
};
