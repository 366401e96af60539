import { INBOX_CAPACITY } from './inbox-context.js';
import { CATCH_UP_MS } from './poller-decisions.js';

/** The gate's knobs, set from the `reflection` block of sources.json. */
export interface GateSettings {
  threshold: number;
  cooldownMs: number;
  leaseMs: number;
  maxAttempts: number;
  reflectEveryMs: number;
  thinkTimeoutMs: number;
  /** The longest wait between asks of a failing thinker (a `Retry-After` included); above `RETRY_CAP_MAX_MS` counts as that. */
  retryCapMs: number;
}

export type GateInput = Partial<GateSettings>;

/** However a thinker fails, and whatever its endpoint asks, it is asked again within 5 minutes. */
export const RETRY_CAP_MAX_MS = 300_000;

export const GATE_DEFAULTS: GateSettings = {
  threshold: 0.5,
  cooldownMs: 0,
  leaseMs: 120_000,
  maxAttempts: 5,
  reflectEveryMs: 120_000,
  thinkTimeoutMs: 60_000,
  retryCapMs: RETRY_CAP_MAX_MS,
};

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

/**
 * The wait before asking the thinker again after its endpoint failed `endpointFailuresInARow`
 * times in a row: the next reflection after a failed answer or the endpoint's first failure, then
 * twice as long with each more, never longer than the cap (at most `RETRY_CAP_MAX_MS`). A
 * `Retry-After` the endpoint sent is waited out, within the same cap. Never sooner than the next
 * reflection, whatever the cap says.
 */
export const retryDelayMs = (
  settings: Pick<GateSettings, 'reflectEveryMs' | 'retryCapMs'>,
  endpointFailuresInARow: number,
  retryAfterMs: number | null = null,
): number => {
  const cap = Math.min(settings.retryCapMs, RETRY_CAP_MAX_MS);
  const doubled = settings.reflectEveryMs * 2 ** Math.max(0, endpointFailuresInARow - 1);
  return Math.max(settings.reflectEveryMs, Math.min(cap, Math.max(doubled, retryAfterMs ?? 0)));
};

/** The settings given, without unknown keys or values that are not numbers: what is left out keeps its value. */
export const definedSettings = (input: GateInput | undefined): GateInput =>
  Object.fromEntries(
    Object.entries(input ?? {}).filter(([key, v]) => key in GATE_DEFAULTS && typeof v === 'number'),
  );
