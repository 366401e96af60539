import { readProcessCpuMs, readProcessMemory } from './process-usage.js';
import { readProcessRunMs, readSchedStat } from './sched-stat.js';
import { median } from './stats.js';

/** What one process used over a measurement window; nulls off Linux. */
export interface WindowUsage {
  /** CPU time (user + system) over wall time, in % of one core. */
  cpuPercent: number | null;
  /** CPU time used in the window, in ms (10 ms resolution). */
  cpuMs: number | null;
  /** CPU time every thread ran in the window, in ms (schedstat, nanosecond resolution); null without schedstats. */
  runMs: number | null;
  /** Median of the RSS readings taken during the window, in bytes. */
  rss: number | null;
  /** VmHWM at the end of the window: the peak since the process started, in bytes. */
  peakRss: number | null;
  /** RSS readings taken. */
  readings: number;
  /** Time the main thread spent runnable but waiting for a core, in % of the window (schedstat). */
  runQueueWaitPercent: number | null;
}

/** A window being measured on one process. */
export interface UsageWindow {
  /** Ends the window and summarises it. */
  finish(): Promise<WindowUsage>;
}

/**
 * Starts measuring a process: reads its CPU time now and at `finish()`, and its RSS every
 * `everyMs` in between (a few /proc reads a second, negligible next to what is measured).
 */
export const startUsageWindow = async (pid: number, everyMs = 1_000): Promise<UsageWindow> => {
  const cpuBefore = await readProcessCpuMs(pid);
  const schedBefore = await readSchedStat(pid);
  const runBefore = await readProcessRunMs(pid);
  const wallBefore = performance.now();
  const rss: number[] = [];
  let reading: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    reading = reading.then(async () => {
      const memory = await readProcessMemory(pid).catch(() => null);
      if (memory) rss.push(memory.rss);
    });
  }, everyMs);
  return {
    async finish() {
      clearInterval(timer);
      const cpuAfter = await readProcessCpuMs(pid);
      const schedAfter = await readSchedStat(pid);
      const runAfter = await readProcessRunMs(pid);
      const wallMs = performance.now() - wallBefore;
      await reading;
      const memory = await readProcessMemory(pid);
      if (memory) rss.push(memory.rss);
      const cpuMs = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
      return {
        cpuPercent: cpuMs === null ? null : (cpuMs / wallMs) * 100,
        cpuMs,
        runMs: runBefore === null || runAfter === null ? null : runAfter - runBefore,
        rss: rss.length === 0 ? null : median(rss),
        peakRss: memory?.peakRss ?? null,
        readings: rss.length,
        runQueueWaitPercent:
          schedBefore === null || schedAfter === null
            ? null
            : ((schedAfter.waitMs - schedBefore.waitMs) / wallMs) * 100,
      };
    },
  };
};
