import { createHash } from 'node:crypto';
import { lstatSync, type Stats } from 'node:fs';
import { emptyFile, type TrackedFile } from '../../machines/pulse-files.js';
import { readBounded, UnreadableFileError } from './read-bounded.js';
import { FolderProblemError } from './real-folder.js';

/** How much of a protocol file the context resource inlines. */
export const INLINE_LIMIT = 64 * 1024;
/**
 * The most of a protocol file pulse reads: past it the file is reported, not hashed, so one call
 * never waits on a huge (or endless, as a /proc file) read. Hashing this much takes ~0.1 s.
 */
export const READ_LIMIT = 16 * 1024 * 1024;

const decoder = new TextDecoder('utf-8', { fatal: false });
/**
 * A stat this recent may not change on the next write (coarse kernel clocks, 1–2 s filesystems),
 * so a file changed within it is hashed again on every scan until it is older.
 */
export const RACY_WINDOW_MS = 3_000;

/** A protocol file pulse cannot read now; `reason` completes "<file> …" with what the user must fix. */
export class TrackedFileError extends Error {
  override name = 'TrackedFileError';

  constructor(
    readonly reason: string,
    /** The settled stat it was found at ('' when unknown or too recent): the same stat is the same verdict. */
    readonly fingerprint: string,
  ) {
    super(reason);
  }
}

/**
 * The stat a file's content is taken to be at. Plain (not BigInt) stats: their times are
 * milliseconds to a fraction of a microsecond, and a file is fingerprinted only once it is
 * older than the racy window, so any later change moves its ctime by seconds, and a file put in
 * its place has a new ctime too (test/effects/files-unchanged.test.ts). A BigInt stat and its
 * fingerprint cost about a quarter more, four times a tool call.
 */
const fingerprintOf = (s: Stats): string => `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;

const settledFingerprint = (s: Stats): string => {
  const settled = Date.now() - RACY_WINDOW_MS;
  return s.mtimeMs < settled && s.ctimeMs < settled ? fingerprintOf(s) : '';
};

const ERRNO_REASONS: Record<string, string> = {
  ELOOP: 'is a symlink loop (ELOOP): replace it with a regular file',
  EACCES: 'cannot be read: permission denied (EACCES): make it readable by the user who runs pulse',
  EPERM: 'cannot be read: operation not permitted (EPERM): make it readable by the user who runs pulse',
  ENAMETOOLONG: 'is a symlink to a path too long to follow (ENAMETOOLONG): replace it with a regular file',
};

const reasonOf = (error: unknown): string => {
  if (error instanceof UnreadableFileError) return error.message;
  if (error instanceof FolderProblemError) return `cannot be read: ${error.message}`;
  const code = (error as NodeJS.ErrnoException).code;
  return (
    (code && ERRNO_REASONS[code]) ??
    `cannot be read (${code ?? String(error)}): check the file, or replace it with a regular file`
  );
};

/**
 * The entry's own stat, a symlink's not its target's (so a link is never taken for the file it
 * replaced), or undefined when it is missing (a missing folder on the way counts too).
 */
const statOf = (path: string): Stats | undefined => {
  try {
    // Synchronous on purpose: every tool call stats the four files, and a local stat takes
    // microseconds where a trip through the thread pool costs a tool call far more.
    return lstatSync(path, { throwIfNoEntry: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
};

/** Whether `stats` shows the file `previous` recorded, with nothing to read again. */
const unchanged = (stats: Stats | undefined, previous: TrackedFile): boolean => {
  if (stats === undefined) return previous.sha256 === null && previous.fingerprint === '';
  return stats.isFile() && previous.fingerprint !== '' && fingerprintOf(stats) === previous.fingerprint;
};

/**
 * True when reading the file again would give `previous` back: same stat fingerprint, settled
 * outside the racy window (or still absent). Never throws: a stat that fails counts as changed.
 */
export const isUnchanged = (path: string, previous: TrackedFile): boolean => {
  try {
    return unchanged(statOf(path), previous);
  } catch {
    return false;
  }
};

/**
 * Reads one protocol file as the sidecar tracks it. Skips hashing when the stat fingerprint
 * matches `previous`; a missing file is absent. Reads at most READ_LIMIT bytes, counted as read,
 * hashing as it goes and keeping the first INLINE_LIMIT for the context. A file it cannot read
 * (a symlink, which is never followed, no permission, a folder, FIFO or device, over the limit)
 * throws `TrackedFileError` with the reason, and the caller keeps what it knew.
 */
export const readTrackedFile = async (path: string, previous: TrackedFile): Promise<TrackedFile> => {
  let stats: Stats | undefined;
  try {
    stats = statOf(path);
  } catch (error) {
    throw new TrackedFileError(reasonOf(error), '');
  }
  if (stats === undefined) return emptyFile();
  if (unchanged(stats, previous)) return previous;
  // git's "racy index" rule: a file changed this recently can change again with the same stat,
  // so its fingerprint is not kept and the next reconcile hashes it again.
  const fingerprint = settledFingerprint(stats);
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let kept = 0;
  let size: number;
  try {
    ({ bytes: size } = await readBounded(path, READ_LIMIT, (chunk) => {
      hash.update(chunk);
      if (kept < INLINE_LIMIT) {
        const part = chunk.subarray(0, INLINE_LIMIT - kept);
        head.push(Buffer.from(part));
        kept += part.length;
      }
    }));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyFile();
    throw new TrackedFileError(reasonOf(error), fingerprint);
  }
  return {
    sha256: hash.digest('hex'),
    size,
    text: decoder.decode(Buffer.concat(head)),
    truncated: size > INLINE_LIMIT,
    fingerprint,
    mtimeMs: Math.floor(stats.mtimeMs),
  };
};

/**
 * `readTrackedFile` that remembers the files it could not read: a file still at the settled stat
 * it was refused at (a /proc file that never ends) is refused again without reading it.
 */
export const createTrackedFileReader = () => {
  const refused = new Map<string, TrackedFileError>();
  return async (path: string, previous: TrackedFile): Promise<TrackedFile> => {
    const known = refused.get(path);
    if (known !== undefined && known.fingerprint !== '') {
      const stats = (() => {
        try {
          return statOf(path);
        } catch {
          return undefined;
        }
      })();
      if (stats !== undefined && fingerprintOf(stats) === known.fingerprint) throw known;
    }
    try {
      const file = await readTrackedFile(path, previous);
      refused.delete(path);
      return file;
    } catch (error) {
      if (error instanceof TrackedFileError) refused.set(path, error);
      throw error;
    }
  };
};
