import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { emptyFile, type TrackedFile } from '../../machines/pulse-files.js';

/** How much of a protocol file the context resource inlines. */
export const INLINE_LIMIT = 64 * 1024;
/** Files up to this size are read in one go; larger ones are hashed as a stream. */
const WHOLE_READ_LIMIT = 4 * 1024 * 1024;

const decoder = new TextDecoder('utf-8', { fatal: false });
/**
 * A stat this recent may not change on the next write (coarse kernel clocks, 1–2 s filesystems),
 * so a file changed within it is hashed again on every scan until it is older.
 */
export const RACY_WINDOW_MS = 3_000;
const RACY_WINDOW_NS = BigInt(RACY_WINDOW_MS) * 1_000_000n;

const fingerprintOf = (s: import('node:fs').BigIntStats): string =>
  `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;

const hashStream = (path: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });

type Stats = import('node:fs').BigIntStats;

/** The file's stat, or undefined when it is missing (a missing folder on the way counts too). */
const statOf = (path: string): Stats | undefined => {
  try {
    // Synchronous on purpose: every tool call stats the four files, and a local stat takes
    // microseconds where a trip through the thread pool costs a tool call far more.
    return statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
};

const notAFile = (stats: Stats): string => `not-a-file:${stats.ino}`;

/** Whether `stats` shows the file `previous` recorded, with nothing to read again. */
const unchanged = (stats: Stats | undefined, previous: TrackedFile): boolean => {
  if (stats === undefined) return previous.sha256 === null && previous.fingerprint === '';
  if (!stats.isFile()) return previous.fingerprint === notAFile(stats);
  return previous.fingerprint !== '' && fingerprintOf(stats) === previous.fingerprint;
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
 * matches `previous`. A missing file, or anything that is not a regular file, is absent.
 */
export const readTrackedFile = async (path: string, previous: TrackedFile): Promise<TrackedFile> => {
  const stats = statOf(path);
  if (stats === undefined) return emptyFile();
  if (!stats.isFile()) return { ...emptyFile(), fingerprint: notAFile(stats) };
  if (unchanged(stats, previous)) return previous;
  // git's "racy index" rule: a file changed this recently can change again with the same stat,
  // so its fingerprint is not kept and the next reconcile hashes it again.
  const settled = BigInt(Date.now()) * 1_000_000n - RACY_WINDOW_NS;
  const fingerprint = stats.mtimeNs < settled && stats.ctimeNs < settled ? fingerprintOf(stats) : '';
  const size = Number(stats.size);
  const mtimeMs = Number(stats.mtimeNs / 1_000_000n);
  if (size <= WHOLE_READ_LIMIT) {
    const handle = await open(path, 'r');
    try {
      const bytes = await handle.readFile();
      return {
        sha256: createHash('sha256').update(bytes).digest('hex'),
        size: bytes.length,
        text: decoder.decode(bytes.subarray(0, INLINE_LIMIT)),
        truncated: bytes.length > INLINE_LIMIT,
        fingerprint,
        mtimeMs,
      };
    } finally {
      await handle.close();
    }
  }
  const handle = await open(path, 'r');
  let head: Buffer;
  try {
    head = Buffer.alloc(INLINE_LIMIT);
    const { bytesRead } = await handle.read(head, 0, INLINE_LIMIT, 0);
    head = head.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  return {
    sha256: await hashStream(path),
    size,
    text: decoder.decode(head),
    truncated: true,
    fingerprint,
    mtimeMs,
  };
};
