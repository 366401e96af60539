import { readdir, readFile } from 'node:fs/promises';

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

/**
 * CPU time every thread of a process has run so far (the event loop, GC helpers, the thread
 * pool), in ms at nanosecond resolution, from each `/proc/<pid>/task/<tid>/schedstat`; null off
 * Linux or without schedstats. A thread that ended meanwhile is no longer counted.
 */
export const readProcessRunMs = async (pid: number): Promise<number | null> => {
  if (process.platform !== 'linux') return null;
  try {
    const tasks = await readdir(`/proc/${pid}/task`);
    const runs = await Promise.all(
      tasks.map((tid) =>
        readFile(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').then(
          (text) => Number(text.trim().split(/\s+/)[0]) / 1e6,
          () => 0,
        ),
      ),
    );
    const total = runs.reduce((sum, run) => sum + run, 0);
    return Number.isNaN(total) ? null : total;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};
