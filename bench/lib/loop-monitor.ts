/**
 * Preloaded into a daemon with `node --import <this file's URL>?out=<path>` (see loop-delay.ts);
 * it runs inside the daemon, beside its code, and changes nothing it does. It watches the event
 * loop's delay (monitorEventLoopDelay) and the GC pauses (PerformanceObserver 'gc'). The first
 * SIGUSR2 starts a window; the second writes the window's figures to `out` as JSON (through a
 * temp file and a rename, so the bench never reads half a file).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

/** The histogram's timer period: each sample is this plus the delay, in ms. */
export const RESOLUTION_MS = 10;

/** What the second SIGUSR2 writes. Times in ms. */
export interface LoopFigures {
  windowMs: number;
  /** Event-loop delay: how late a timer due every RESOLUTION_MS ran (resolution subtracted). */
  delay: { p50: number; p99: number; max: number; mean: number; samples: number };
  /** GC pauses that ended in the window. */
  gc: { count: number; totalMs: number; longestMs: number };
  /** `process.memoryUsage()` at the end of the window, in bytes. */
  memory: { rss: number; heapUsed: number; heapTotal: number; external: number; arrayBuffers: number };
}

const out = new URL(import.meta.url).searchParams.get('out');

if (out) {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  let pauses: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push(entry.duration);
  });
  observer.observe({ entryTypes: ['gc'] });
  let windowStart: number | null = null;
  const delay = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
  process.on('SIGUSR2', () => {
    if (windowStart === null) {
      histogram.reset();
      pauses = [];
      windowStart = performance.now();
      return;
    }
    const figures: LoopFigures = {
      windowMs: performance.now() - windowStart,
      delay: {
        p50: delay(histogram.percentile(50)),
        p99: delay(histogram.percentile(99)),
        max: delay(histogram.max),
        mean: delay(histogram.mean),
        samples: histogram.count,
      },
      gc: {
        count: pauses.length,
        totalMs: pauses.reduce((sum, ms) => sum + ms, 0),
        longestMs: pauses.reduce((longest, ms) => Math.max(longest, ms), 0),
      },
      memory: process.memoryUsage(),
    };
    writeFileSync(`${out}.tmp`, JSON.stringify(figures));
    renameSync(`${out}.tmp`, out);
  });
}
