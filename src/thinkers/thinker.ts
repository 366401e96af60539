import type { Judgement } from '../../machines/delivery-rules.js';
import type { InboxEvent } from '../../machines/external.js';

/** Judges drained events, as facts: how urgent each is, 0..1. Throwing or answering nothing usable is a failed thought. */
export interface Thinker {
  think(events: InboxEvent[], now: number): Promise<Judgement[]>;
}

/** A thinker that did not answer in time. */
export class ThinkTimeoutError extends Error {
  override name = 'ThinkTimeoutError';
  readonly timeoutMs: number;
  readonly reason: string;

  constructor(timeoutMs: number) {
    super(`The thinker did not answer within ${timeoutMs} ms.`);
    this.timeoutMs = timeoutMs;
    this.reason = `no answer within ${timeoutMs / 1000} s`;
  }
}

/** Bounds a thinker's answer by `ms`: a late answer becomes a `ThinkTimeoutError` (a failed thought). */
export const withTimeout = (thinker: Thinker, ms: number): Thinker => ({
  think(events, now) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ThinkTimeoutError(ms)), ms);
    });
    return Promise.race([thinker.think(events, now), timeout]).finally(() => clearTimeout(timer));
  },
});
