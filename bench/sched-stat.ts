import { readFile } from 'node:fs/promises';

/** What the scheduler did with a process's main thread so far, from `/proc/<pid>/schedstat`. */
export interface SchedStat {
  /** Time spent running on a CPU, in ms. */
  runMs: number;
  /** Time spent runnable but waiting on a run queue for a CPU, in ms: the cost of a busy machine. */
  waitMs: number;
}

/**
 * Reads `/proc/<pid>/schedstat` (the thread-group leader: the thread that runs Node's event
 * loop); null off Linux or where the kernel has no schedstats.
 */
export const readSchedStat = async (pid: number): Promise<SchedStat | null> => {
  if (process.platform !== 'linux') return null;
  try {
    const [run, wait] = (await readFile(`/proc/${pid}/schedstat`, 'utf8')).trim().split(/\s+/).map(Number);
    if (run === undefined || wait === undefined || Number.isNaN(run) || Number.isNaN(wait)) return null;
    return { runMs: run / 1e6, waitMs: wait / 1e6 };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};
