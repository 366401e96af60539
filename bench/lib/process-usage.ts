import { readFile } from 'node:fs/promises';

/** Resident memory of a process, from Linux's `/proc/<pid>/status`. */
export interface ProcessMemory {
  /** VmRSS: resident now, in bytes. */
  rss: number;
  /** VmHWM: the peak resident size so far, in bytes. */
  peakRss: number;
}

/** `/proc/<pid>/stat` counts CPU time in USER_HZ ticks, 100 a second on every Linux ABI Node runs on. */
const TICK_MS = 10;

/** A file under `/proc/<pid>/`; null where `/proc` does not exist (macOS, Windows). */
const readProc = async (pid: number, name: string): Promise<string | null> => {
  if (process.platform !== 'linux') return null;
  return readFile(`/proc/${pid}/${name}`, 'utf8');
};

const field = (status: string, name: string): number => {
  const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
  if (!match) throw new Error(`/proc status has no ${name}`);
  return Number(match[1]) * 1024;
};

/** Another process's resident memory; null off Linux. */
export const readProcessMemory = async (pid: number): Promise<ProcessMemory | null> => {
  const status = await readProc(pid, 'status');
  return status === null ? null : { rss: field(status, 'VmRSS'), peakRss: field(status, 'VmHWM') };
};

/**
 * CPU time (user + system) another process has used so far, in milliseconds, at 10 ms
 * resolution; null off Linux. Unlike wall time, it does not grow when the machine is busy.
 */
export const readProcessCpuMs = async (pid: number): Promise<number | null> => {
  const stat = await readProc(pid, 'stat');
  if (stat === null) return null;
  // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
};
