import { errorMessage } from '../../machines/error-message.js';

/** The longest reason taken from an error that names none of its own. */
const REASON_MAX = 80;

/**
 * A failed thought as the gate reads it (`failureOf` in machines/gate-decisions.ts): the
 * sentence, when it failed, why in a few words, and how long the thinker's endpoint asked to be
 * left alone (`Retry-After`).
 */
export class ThoughtError extends Error {
  override name = 'ThoughtError';
  readonly at: number;
  readonly reason: string;
  readonly retryAfterMs: number | null;

  constructor(message: string, { at, reason, retryAfterMs }: Omit<ThoughtError, keyof Error>) {
    super(message);
    this.at = at;
    this.reason = reason;
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * A thinker's error as a `ThoughtError` at `at`: the reason and `Retry-After` it carries (a model
 * call's, a timeout's, an unusable answer's), else the start of its message; `redact` clears
 * secrets from what is kept.
 */
export const thoughtError = (
  error: unknown,
  { by, at, redact }: { by: string; at: number; redact: (text: string) => string },
): ThoughtError => {
  const carried = (typeof error === 'object' && error !== null ? error : {}) as {
    reason?: unknown;
    retryAfterMs?: unknown;
  };
  const message = errorMessage(error);
  return new ThoughtError(redact(`${by}: ${message}`), {
    at,
    reason: redact(typeof carried.reason === 'string' ? carried.reason : message.slice(0, REASON_MAX)),
    retryAfterMs: typeof carried.retryAfterMs === 'number' ? carried.retryAfterMs : null,
  });
};
