import { SimulatedClock } from 'xstate';

/**
 * A `SimulatedClock` that knows when its next timer is due, so a run can jump from timer to
 * timer instead of ticking: a jump past a due timer would fire it at the wrong "now".
 */
export class SteppedClock extends SimulatedClock {
  readonly #due = new Map<number, number>();

  override setTimeout(fn: (...args: unknown[]) => void, timeout: number): number {
    const at = this.now() + timeout;
    const id = super.setTimeout((...args: unknown[]) => {
      this.#due.delete(id);
      fn(...args);
    }, timeout);
    this.#due.set(id, at);
    return id;
  }

  override clearTimeout(id: number): void {
    this.#due.delete(id);
    super.clearTimeout(id);
  }

  /** When the earliest pending timer fires, or `null` when none is pending. */
  nextDueAt(): number | null {
    let next: number | null = null;
    for (const at of this.#due.values()) if (next === null || at < next) next = at;
    return next;
  }

  /** Moves from timer to timer up to `until` (not past it), letting each instant come to `rest` first. */
  async runTimersUntil(until: number, rest: () => Promise<void>): Promise<void> {
    await rest();
    for (let next = this.nextDueAt(); next !== null && next <= until; next = this.nextDueAt()) {
      this.set(next);
      await rest();
    }
  }
}
