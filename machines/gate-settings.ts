import { INBOX_CAPACITY } from './inbox.js';
import { CATCH_UP_MS } from './poller.js';

/** The gate's knobs, set from the `reflection` block of sources.json. */
export interface GateSettings {
  threshold: number;
  cooldownMs: number;
  leaseMs: number;
  maxAttempts: number;
  reflectEveryMs: number;
  thinkTimeoutMs: number;
  /** The wait after a failed thought; it doubles with each failure in a row, up to `RETRY_BACKOFF_MAX_FACTOR` times. */
  retryBackoffMs: number;
}

export type GateInput = Partial<GateSettings>;

export const GATE_DEFAULTS: GateSettings = {
  threshold: 0.5,
  cooldownMs: 0,
  leaseMs: 120_000,
  maxAttempts: 5,
  reflectEveryMs: 120_000,
  thinkTimeoutMs: 60_000,
  retryBackoffMs: 360_000,
};

/** The backoff after failed thoughts in a row stops doubling at this many times `retryBackoffMs`. */
export const RETRY_BACKOFF_MAX_FACTOR = 2;

/**
 * How long the gate waits after an insert for more: a poll that hit the per-tick cap is followed
 * by a catch-up poll `CATCH_UP_MS` later, and sources started together insert within moments.
 */
export const INSERT_QUIET_MS = CATCH_UP_MS + 1_000;

/**
 * A failed batch this big is tried again at the timer's pace, without the backoff: while it
 * waits, polls keep adding to the inbox, and once the inbox is full, new items stay at their
 * source, where a fast one scrolls them out of its list.
 */
export const BACKLOG_EVENTS = INBOX_CAPACITY / 4;

/** The wait before trying again after `failedInARow` failed thoughts. */
export const retryBackoffMs = (
  settings: Pick<GateSettings, 'retryBackoffMs'>,
  failedInARow: number,
): number => settings.retryBackoffMs * Math.min(2 ** Math.max(0, failedInARow - 1), RETRY_BACKOFF_MAX_FACTOR);

/** The settings given, without unknown keys or values that are not numbers: what is left out keeps its value. */
export const definedSettings = (input: GateInput | undefined): GateInput =>
  Object.fromEntries(
    Object.entries(input ?? {}).filter(([key, v]) => key in GATE_DEFAULTS && typeof v === 'number'),
  );
