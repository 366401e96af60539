import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pulse, shellWord } from '../package/pulse-command.js';
import { readDiscovery } from './discovery-file.js';

/** Who holds a project's daemon lock: its pid and when it started (with the kernel's start tick, to tell a reused pid). */
export interface LockOwner {
  pid: number;
  started_at: string;
  /** `/proc/<pid>/stat`'s start time in clock ticks; null where there is no /proc. */
  proc_start: string | null;
  nonce: string;
}

/** A daemon already serves this project: the message names it and its endpoint. */
export class DaemonRunningError extends Error {
  override name = 'DaemonRunningError';

  constructor(
    message: string,
    readonly owner: LockOwner | null,
  ) {
    super(message);
  }
}

export const LOCK_FILE = 'daemon.lock';
/** A takeover that stopped halfway (its starter killed) is cleared after this. */
const GATE_STALE_MS = 10_000;
const ATTEMPTS = 50;
const RETRY_MS = 20;

/** The process's start tick and whether it is a zombie, from /proc; null where there is none. */
const procStat = (pid: number): { start: string; zombie: boolean } | null => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { start: fields[19] ?? '', zombie: fields[0] === 'Z' };
  } catch {
    return null;
  }
};

/** Whether the lock's owner is still running: its pid lives, is not us, and started when the lock says. */
const ownerAlive = (owner: LockOwner): boolean => {
  if (owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const proc = procStat(owner.pid);
  if (proc === null) return true;
  if (proc.zombie) return false;
  return owner.proc_start === null || proc.start === owner.proc_start;
};

const parseOwner = (text: string): LockOwner | null => {
  try {
    const value = JSON.parse(text) as LockOwner;
    return typeof value.pid === 'number' && typeof value.nonce === 'string' ? value : null;
  } catch {
    return null;
  }
};

const readText = (path: string): Promise<string | null> =>
  readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

const runningMessage = (pulseDir: string, owner: LockOwner): string => {
  const discovery = readDiscovery(pulseDir);
  const where =
    discovery?.pid === owner.pid
      ? `at ${discovery.url}`
      : 'and has not written its endpoint to daemon.json yet';
  return `pulse is already running for this project (pid ${owner.pid}, started ${owner.started_at}) ${where}. One daemon serves one project: use it (${pulse(`status -p ${shellWord(dirname(pulseDir))}`)}), or stop it first (${pulse(`stop -p ${shellWord(dirname(pulseDir))}`)}).`;
};

/**
 * Takes a stale lock out of the way, once: `<lock>.stale-<nonce>` is a gate only one starter can
 * create (link fails on an existing name), and the lock is removed only if the gate holds the
 * very lock that was judged stale. Two starters can therefore never both remove a lock, nor
 * remove a fresh one. False when another starter got there first.
 */
const clearStale = async (lock: string, stale: string, nonce: string): Promise<boolean> => {
  const gate = `${lock}.stale-${nonce.replace(/[^\w-]/g, '').slice(0, 64) || 'unknown'}`;
  try {
    await link(lock, gate);
  } catch (error) {
    if (code(error) !== 'EEXIST') return false;
    // A starter killed halfway through a takeover left its gate: clear it after a while.
    const since = await stat(gate).then(
      (s) => Date.now() - s.ctimeMs,
      () => 0,
    );
    if (since > GATE_STALE_MS) await unlink(gate).catch(() => undefined);
    return false;
  }
  try {
    if ((await readText(gate)) !== stale) return false;
    await unlink(lock).catch(() => undefined);
    return true;
  } finally {
    await unlink(gate).catch(() => undefined);
  }
};

/** The daemon that holds the project's lock and still runs (its pid, started when the lock says), or null. */
export const liveLockOwner = async (pulseDir: string): Promise<LockOwner | null> => {
  const held = await readText(join(pulseDir, LOCK_FILE));
  const owner = held === null ? null : parseOwner(held);
  return owner !== null && ownerAlive(owner) ? owner : null;
};

/** Whether `owner` still runs (a reused pid does not count). */
export const isOwnerRunning = (owner: LockOwner): boolean => ownerAlive(owner);

/**
 * Takes `.pulse/daemon.lock` for this process, or throws `DaemonRunningError` naming the daemon
 * that holds it and its endpoint. The lock is created whole (a temp file hard-linked into place,
 * which fails if the name exists), and a dead owner's lock (its pid gone, a zombie, or reused by
 * another process) is taken over. Returns the function that releases it.
 */
export const acquireDaemonLock = async (pulseDir: string): Promise<{ release(): Promise<void> }> => {
  const lock = join(pulseDir, LOCK_FILE);
  const proc = procStat(process.pid);
  const me: LockOwner = {
    pid: process.pid,
    started_at: new Date().toISOString(),
    proc_start: proc?.start ?? null,
    nonce: randomBytes(8).toString('hex'),
  };
  const mine = `${JSON.stringify(me)}\n`;
  const temp = join(pulseDir, `${LOCK_FILE}.${me.nonce}.tmp`);
  await writeFile(temp, mine, { flag: 'wx' });
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        await link(temp, lock);
        return {
          async release() {
            if ((await readText(lock).catch(() => null)) === mine) await unlink(lock).catch(() => undefined);
          },
        };
      } catch (error) {
        if (code(error) !== 'EEXIST') throw error;
      }
      const held = await readText(lock);
      if (held === null) continue;
      const owner = parseOwner(held);
      if (owner !== null && ownerAlive(owner))
        throw new DaemonRunningError(runningMessage(pulseDir, owner), owner);
      if (!(await clearStale(lock, held, owner?.nonce ?? 'unreadable'))) {
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
    throw new DaemonRunningError(
      `Another pulse keeps starting for this project (${lock} changed ${ATTEMPTS} times). Run pulse status, then start again.`,
      null,
    );
  } finally {
    await unlink(temp).catch(() => undefined);
  }
};
