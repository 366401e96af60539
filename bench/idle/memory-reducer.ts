import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * `node` flag that prints a line per GC on stdout; V8's memory reducer marks its GCs
 * `Mark-Compact (reduce)`. It changes no GC decision, and an idle daemon collects rarely.
 */
export const TRACE_GC = '--trace-gc';

/** How long to wait for the reducer: after its last GC (they come two or three in a row), and at most. */
export interface ReducerPlan {
  settleMs: number;
  /** From the daemon's spawn. */
  limitMs: number;
}

/** When a daemon's memory reducer ran, from its spawn. */
export interface ReducerRun {
  /** Its last `(reduce)` GC; null if none came within the limit. */
  lastGcMs: number | null;
  /** From spawn to the end of the wait. */
  waitedMs: number;
}

const CHECK_EVERY_MS = 250;

/**
 * Reads the `--trace-gc` lines of a daemon started with TRACE_GC. The reducer is what ends an
 * idle daemon's start-up: it waits for allocation to slow, then compacts and shrinks the heap.
 */
export const watchMemoryReducer = (stdout: Readable, spawnedAt: number) => {
  let lastGcAt: number | null = null;
  let partial = '';
  stdout.on('data', (chunk: Buffer) => {
    const lines = `${partial}${chunk}`.split('\n');
    partial = lines.pop() ?? '';
    if (lines.some((line) => line.includes('Mark-Compact (reduce)'))) lastGcAt = performance.now();
  });
  return {
    /** Resolves once the reducer has run and `settleMs` have passed without another of its GCs, or at the limit. */
    async done({ settleMs, limitMs }: ReducerPlan): Promise<ReducerRun> {
      const since = (at: number) => at - spawnedAt;
      while (since(performance.now()) < limitMs) {
        if (lastGcAt !== null && performance.now() - lastGcAt >= settleMs) {
          return { lastGcMs: since(lastGcAt), waitedMs: since(performance.now()) };
        }
        await sleep(CHECK_EVERY_MS);
      }
      return { lastGcMs: null, waitedMs: since(performance.now()) };
    },
  };
};
