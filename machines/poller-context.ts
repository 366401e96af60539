import type { ExternalItem, PolledSource, ToolSafety } from './external.js';
import type { OfferReply } from './inbox-context.js';

/**
 * The outcome of one call to a source's tool, with what its tool says of its side effects.
 * Failures are data: the effect never throws. A refusal (`refused`) is a tool that says it
 * writes or destroys, which was not called.
 */
export type FetchOutcome =
  | { ok: true; items: ExternalItem[]; tool?: ToolSafety; at: number; durationMs: number; jitter: number }
  | { ok: false; error: string; refused?: ToolSafety; at: number; durationMs: number; jitter: number };

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

/** The poller's input: the source it polls. */
export interface PollerInput {
  source: PolledSource;
}

/** A poller's context at start: nothing polled yet. */
export const initialPollerContext = (input: PollerInput): PollerContext => ({
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
});
