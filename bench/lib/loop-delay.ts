import { readFile } from 'node:fs/promises';
import type { LoopFigures } from './loop-monitor.js';

export type { LoopFigures } from './loop-monitor.js';

/** Longest wait for the daemon to write its figures after the second signal. */
const WRITE_LIMIT_MS = 5_000;
const CHECK_EVERY_MS = 20;

/** `node` arguments that preload loop-monitor.js into a daemon, writing its figures to `out`. */
export const loopMonitorArgs = (out: string): string[] => {
  const url = new URL('./loop-monitor.js', import.meta.url);
  url.searchParams.set('out', out);
  return ['--import', url.href];
};

/** A window of a daemon's event-loop figures being measured. */
export interface LoopWindow {
  finish(): Promise<LoopFigures>;
}

const readFigures = async (out: string): Promise<LoopFigures | null> => {
  try {
    return JSON.parse(await readFile(out, 'utf8')) as LoopFigures;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};

/**
 * Starts the window in a daemon started with `loopMonitorArgs(out)` (first SIGUSR2); `finish`
 * ends it (second SIGUSR2) and waits for the daemon to write its figures.
 */
export const startLoopWindow = (pid: number, out: string): LoopWindow => {
  process.kill(pid, 'SIGUSR2');
  return {
    async finish() {
      process.kill(pid, 'SIGUSR2');
      const deadline = performance.now() + WRITE_LIMIT_MS;
      for (;;) {
        const figures = await readFigures(out);
        if (figures) return figures;
        if (performance.now() > deadline)
          throw new Error(
            `The daemon ${pid} wrote no event-loop figures to ${out} within ${WRITE_LIMIT_MS} ms.`,
          );
        await new Promise((resolve) => setTimeout(resolve, CHECK_EVERY_MS));
      }
    },
  };
};
