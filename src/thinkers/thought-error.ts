import { errorMessage } from '../../machines/error-message.js';
import type { FailureKind } from '../../machines/gate-context.js';

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
  readonly kind: FailureKind;

  constructor(message: string, { at, reason, retryAfterMs, kind }: Omit<ThoughtError, keyof Error>) {
    super(message);
    this.at = at;
    this.reason = reason;
    this.retryAfterMs = retryAfterMs;
    this.kind = kind;
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
    kind?: unknown;
  };
  const message = errorMessage(error);
  return new ThoughtError(redact(`${by}: ${message}`), {
    at,
    reason: redact(typeof carried.reason === 'string' ? carried.reason : message.slice(0, REASON_MAX)),
    retryAfterMs: typeof carried.retryAfterMs === 'number' ? carried.retryAfterMs : null,
    // An error that does not say what failed is taken for the endpoint's: backing off is the safe side.
    kind: carried.kind === 'answer' ? 'answer' : 'endpoint',
  });
};
