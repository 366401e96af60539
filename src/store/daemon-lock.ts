import { randomBytes } from 'node:crypto';
import { link, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { notMyProcess, processOwner, procStat } from '../os/process-owner.js';
import { pulse, shellWord } from '../package/pulse-command.js';
import { VERSION } from '../package/version.js';
import { readDaemonRecord, removeDaemonRecord, writeDaemonRecord } from './daemon-record.js';
import { realProjectRoot } from './project-id.js';

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

/** How long a live process of ours may hold the lock before its daemon record agrees (it writes it right after). */
const RECORD_GRACE_MS = 2000;

/**
 * What holds a lock: a pulse daemon of this user serving the project (the lock's pid, start tick
 * and nonce are what this user's daemon record says), a stranger (a live process the record does
 * not name: a planted or foreign lock, or a daemon between taking the lock and writing its
 * record), or nothing alive (a crash, or a pid reused since).
 */
export type LockHolder =
  | { kind: 'daemon'; owner: LockOwner }
  | { kind: 'stranger'; owner: LockOwner; why: string }
  | { kind: 'stale'; owner: LockOwner | null };

const judge = (pulseDir: string, owner: LockOwner | null): LockHolder => {
  if (owner === null || owner.pid === process.pid) return { kind: 'stale', owner };
  if (processOwner(owner.pid, owner.proc_start).kind === 'gone') return { kind: 'stale', owner };
  const notMine = notMyProcess(owner.pid, owner.proc_start);
  const read = readDaemonRecord(dirname(pulseDir));
  const record = read !== null && 'record' in read ? read.record : null;
  if (notMine === null && record?.pid === owner.pid && record.lock_nonce === owner.nonce)
    return { kind: 'daemon', owner };
  return {
    kind: 'stranger',
    owner,
    why:
      notMine ?? (read !== null && 'problem' in read ? read.problem : 'no daemon record of yours names it'),
  };
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
  const read = readDaemonRecord(dirname(pulseDir));
  const url = read !== null && 'record' in read ? read.record.url : undefined;
  const where = url === undefined ? 'and is still opening the project' : `at ${url}`;
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

/** Who holds the project's lock, judged against this user's daemon record; null when there is no lock. */
export const lockHolder = async (pulseDir: string): Promise<LockHolder | null> => {
  const held = await readText(join(pulseDir, LOCK_FILE));
  return held === null ? null : judge(pulseDir, parseOwner(held));
};

/** Whether `owner` still runs (a reused pid does not count). */
export const isOwnerRunning = (owner: LockOwner): boolean =>
  processOwner(owner.pid, owner.proc_start).kind !== 'gone';

/** The lock taken, its release (the daemon record with it), and what it replaced, if anyone lived there. */
export interface HeldLock {
  owner: LockOwner;
  /** A live process's lock that was not a pulse daemon of this user's, taken over: said at start. */
  replaced: string | null;
  release(): Promise<void>;
}

/**
 * Takes `.pulse/daemon.lock` for this process and writes this user's daemon record with it, or
 * throws `DaemonRunningError` naming the daemon that holds it and its endpoint. The lock is
 * created whole (a temp file hard-linked into place, which fails if the name exists). A lock is a
 * daemon's only while this user's record agrees: a dead owner's lock (its pid gone, a zombie, or
 * reused) is taken over at once, a live process's that no record names once it has had time to
 * write one (a lock planted in the repository never blocks a start).
 */
export const acquireDaemonLock = async (pulseDir: string): Promise<HeldLock> => {
  const lock = join(pulseDir, LOCK_FILE);
  const project = realProjectRoot(dirname(pulseDir));
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
  const release = async () => {
    removeDaemonRecord(project);
    if ((await readText(lock).catch(() => null)) === mine) await unlink(lock).catch(() => undefined);
  };
  // The first time each stranger's lock was seen, by its text: its grace is counted from then.
  const firstSeen = new Map<string, number>();
  let replaced: string | null = null;
  try {
    for (let attempt = 0; attempt < ATTEMPTS; ) {
      try {
        await link(temp, lock);
      } catch (error) {
        if (code(error) !== 'EEXIST') throw error;
        const held = await readText(lock);
        if (held === null) continue;
        const holder = judge(pulseDir, parseOwner(held));
        if (holder.kind === 'daemon')
          throw new DaemonRunningError(runningMessage(pulseDir, holder.owner), holder.owner);
        if (holder.kind === 'stranger') {
          const since = firstSeen.get(held) ?? Date.now();
          firstSeen.set(held, since);
          if (Date.now() - since < RECORD_GRACE_MS) {
            await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
            continue;
          }
          replaced = `${lock} named pid ${holder.owner.pid}, which is not a pulse daemon of yours serving this project (${holder.why}): taken over.`;
        }
        attempt++;
        if (!(await clearStale(lock, held, holder.owner?.nonce ?? 'unreadable'))) {
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        }
        continue;
      }
      try {
        writeDaemonRecord({
          pid: me.pid,
          proc_start: me.proc_start,
          lock_nonce: me.nonce,
          project,
          version: VERSION,
          started_at: me.started_at,
        });
      } catch (error) {
        await release();
        throw error;
      }
      return { owner: me, replaced, release };
    }
    throw new DaemonRunningError(
      `Another pulse keeps starting for this project (${lock} changed ${ATTEMPTS} times). Run pulse status, then start again.`,
      null,
    );
  } finally {
    await unlink(temp).catch(() => undefined);
  }
};
