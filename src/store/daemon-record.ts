import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { ensureUserState, existingUserState, UserStateError } from '../os/user-state.js';
import { realProjectRoot } from './project-id.js';

/** Where a daemon serves a project: what the CLI and hooks connect to once it is verified. */
export interface Discovery {
  pid: number;
  host: string;
  port: number;
  url: string;
  version: string;
  started_at: string;
  /** The project's id on the daemon (its URLs are under `/p/<id>/`). */
  project_id: string;
  /** The Stately inspector's relay page, when the daemon runs with `--inspect`. */
  inspect_url?: string;
  /** Every request needs `Authorization: Bearer $PULSE_TOKEN` (the token is never written anywhere). */
  token_required?: boolean;
}

/**
 * A daemon's record of one project in the user's own state folder, never in the project: who
 * holds the project's lock (from the moment it takes it) and, once it serves, where.
 */
export interface DaemonRecord extends Partial<Discovery> {
  pid: number;
  /** The kernel's start tick of `pid` (`/proc/<pid>/stat`), to tell a reused pid; null without /proc. */
  proc_start: string | null;
  /** The nonce of the `.pulse/daemon.lock` this daemon holds. */
  lock_nonce: string;
  /** The project folder, links followed. */
  project: string;
  version: string;
  started_at: string;
}

/** The folder of the records, under the user's state folder. */
export const RECORDS = 'daemons';

const fileName = (realRoot: string) =>
  `${createHash('sha256').update(realRoot).digest('hex').slice(0, 32)}.json`;

/** Writes the project's record whole (a 0600 temp file renamed over it), creating the folder 0700. */
export const writeDaemonRecord = (record: DaemonRecord): void => {
  const path = join(ensureUserState(RECORDS), fileName(realProjectRoot(record.project)));
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
};

/** Why a record file cannot be this user's own, or null when it is (a regular file, ours, writable by us only). */
const unsafeFile = (stats: Stats): string | null => {
  if (!stats.isFile()) return 'is not a regular file';
  if (process.getuid === undefined) return null;
  if (stats.uid !== process.getuid()) return `belongs to uid ${stats.uid}, not to you`;
  if ((stats.mode & 0o022) !== 0)
    return `can be written by other users (mode ${(stats.mode & 0o777).toString(8)})`;
  return null;
};

const parse = (text: string): DaemonRecord | null => {
  try {
    const value = JSON.parse(text) as DaemonRecord;
    return typeof value === 'object' && value !== null && Number.isInteger(value.pid) ? value : null;
  } catch {
    return null;
  }
};

/** A record read, none, or why the one there was ignored. */
export type RecordRead = { record: DaemonRecord } | { problem: string } | null;

// Read synchronously: the first asynchronous file read starts libuv's thread pool, a few
// milliseconds that `pulse hook` would otherwise pay on every tool call for a file this small.
const readAt = (path: string): RecordRead => {
  let fd: number;
  try {
    // A symlink is refused by the kernel here (ELOOP), never followed.
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? null
      : {
          problem: `${path} is ignored: it ${code === 'ELOOP' ? 'is a symlink' : `cannot be read (${code})`}`,
        };
  }
  try {
    const unsafe = unsafeFile(fstatSync(fd));
    if (unsafe !== null) return { problem: `${path} is ignored: it ${unsafe}` };
    const record = parse(readFileSync(fd, 'utf8'));
    return record === null ? { problem: `${path} is ignored: it is not a pulse daemon record` } : { record };
  } finally {
    closeSync(fd);
  }
};

/** The folder of this user's daemon records, null while there is none, or why it is not used. */
export const recordsFolder = (env: NodeJS.ProcessEnv = process.env): string | { problem: string } | null => {
  try {
    return existingUserState(RECORDS, env);
  } catch (error) {
    if (error instanceof UserStateError)
      return { problem: `${error.message} No daemon record there is used` };
    throw error;
  }
};

/** The record in `folder` for the project at `realRoot` (a path with links already followed). */
export const readRecordIn = (folder: string, realRoot: string): RecordRead =>
  readAt(join(folder, fileName(realRoot)));

/** The record of the daemon serving `root` (any path to it), none, or why the one there was ignored. */
export const readDaemonRecord = (root: string, env: NodeJS.ProcessEnv = process.env): RecordRead => {
  const folder = recordsFolder(env);
  if (folder === null || typeof folder === 'object') return folder;
  return readRecordIn(folder, realProjectRoot(root));
};

/** Every record of this user's daemons, with why any was ignored. */
export const listDaemonRecords = (): { records: DaemonRecord[]; problems: string[] } => {
  const folder = recordsFolder();
  if (folder === null) return { records: [], problems: [] };
  if (typeof folder === 'object') return { records: [], problems: [folder.problem] };
  const records: DaemonRecord[] = [];
  const problems: string[] = [];
  for (const name of readdirSync(folder)) {
    if (!name.endsWith('.json')) continue;
    const read = readAt(join(folder, name));
    if (read === null) continue;
    if ('record' in read) records.push(read.record);
    else problems.push(read.problem);
  }
  return { records, problems };
};

/** Removes the project's record only if it still names this process (a newer daemon may own it). */
export const removeDaemonRecord = (root: string, pid = process.pid): void => {
  const folder = recordsFolder();
  if (folder === null || typeof folder === 'object') return;
  const path = join(folder, fileName(realProjectRoot(root)));
  const read = readAt(path);
  if (read !== null && 'record' in read && read.record.pid === pid) rmSync(path, { force: true });
};
