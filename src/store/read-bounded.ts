import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { assertNotFollowed } from './real-folder.js';

type Refusal = 'too-large' | 'not-regular' | 'symlink' | 'replaced';

/** A file pulse will not read (too big, a symlink, not a regular file): what it is, and the fix. */
export class UnreadableFileError extends Error {
  override name = 'UnreadableFileError';

  constructor(
    readonly kind: Refusal,
    readonly problem: string,
    readonly fix: string,
    /** The file, when the message should name it (a caller that names it itself leaves it out). */
    readonly file?: string,
  ) {
    super(`${file === undefined ? '' : `${file} `}${problem}: ${fix}`);
  }

  /** The same refusal, its message naming `file`. */
  naming(file: string): UnreadableFileError {
    return new UnreadableFileError(this.kind, this.problem, this.fix, file);
  }
}

/**
 * Opening never follows a symlink (ELOOP instead: the link may lead out of the project, say to
 * ~/.ssh) and never waits for a writer (a FIFO put in place of a file).
 */
const READ_NO_FOLLOW = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;
const CHUNK_BYTES = 256 * 1024;
/** How often a file replaced between its lstat and its open is looked at again (an editor's save by rename). */
const ATTEMPTS = 3;

/**
 * The most of one of pulse's own journals (events.jsonl, state.json, the inbox files) it reads:
 * far more than it writes, and below the longest string V8 can make of it (512 MiB).
 */
export const JOURNAL_LIMIT = 256 * 1024 * 1024;

const kindOf = (stats: Stats): string => {
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
};

/** 65536 → "65536 (64 KiB)". */
const limitText = (limit: number): string =>
  limit % (1024 * 1024) === 0 ? `${limit} (${limit / 1024 / 1024} MiB)` : `${limit} (${limit / 1024} KiB)`;

const notRegular = (stats: Stats) =>
  new UnreadableFileError(
    'not-regular',
    `is ${kindOf(stats)}, not a regular file`,
    'replace it with a regular file',
  );

const symlinked = () =>
  new UnreadableFileError(
    'symlink',
    'is a symlink, and pulse never reads through symlinks',
    'replace it with a regular file',
  );

const tooLarge = (limit: number, size?: number) =>
  new UnreadableFileError(
    'too-large',
    `${size === undefined ? 'holds' : `is ${size} bytes,`} more than the limit of ${limitText(limit)}`,
    'make it smaller',
  );

/**
 * Why pulse would refuse the file at `path` (a symlink, not a regular file), by lstat alone:
 * nothing is opened. Null when it is a regular file or missing.
 */
export const refusalOf = async (path: string): Promise<UnreadableFileError | null> => {
  const entry = await lstat(path).catch(() => null);
  if (entry === null || entry.isFile()) return null;
  return entry.isSymbolicLink() ? symlinked() : notRegular(entry);
};

/** What is at `path` now, checked without following it: a regular file within the limit, or a refusal. */
const regularEntry = async (path: string, limit: number): Promise<Stats> => {
  const entry = await lstat(path);
  if (entry.isSymbolicLink()) throw symlinked();
  if (!entry.isFile()) throw notRegular(entry);
  if (entry.size > limit) throw tooLarge(limit, entry.size);
  return entry;
};

/** Opens what `regularEntry` found; null when another file took its place in between. */
const openSame = async (path: string, entry: Stats, limit: number): Promise<FileHandle | null> => {
  let handle: FileHandle;
  try {
    handle = await open(path, READ_NO_FOLLOW);
  } catch (error) {
    // Swapped for a symlink since the lstat: O_NOFOLLOW refuses it.
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw symlinked();
    throw error;
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw notRegular(opened);
    if (opened.dev !== entry.dev || opened.ino !== entry.ino) {
      await handle.close();
      return null;
    }
    if (opened.size > limit) throw tooLarge(limit, opened.size);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
};

/**
 * Reads a user file in chunks, at most `limit` bytes, counting the bytes it actually reads: a
 * stat's size is no bound (a /proc file says 0 and never ends). Each chunk goes to `onChunk` as
 * it is read (a view, valid during the call only), so nothing file-sized is held. Reads only a
 * regular file named by `path` itself: a symlink (even to a file inside the project), a folder,
 * FIFO, socket or device is refused with `UnreadableFileError`, checked by lstat before opening
 * (so no device is opened) and again on the descriptor, opened with O_NOFOLLOW and O_NONBLOCK (so
 * a link swapped in meanwhile is refused and a FIFO never waits), which must be the inode the
 * lstat saw. Its folder must not be a symlink either (`FolderProblemError`). Over the limit
 * throws `UnreadableFileError` too; other errors (ENOENT, EACCES) are thrown as they are.
 * Returns the bytes read and the descriptor's stat.
 */
export const readBounded = async (
  path: string,
  limit: number,
  onChunk: (chunk: Buffer) => void,
): Promise<{ bytes: number; stats: Stats }> => {
  assertNotFollowed(dirname(path));
  let handle: FileHandle | null = null;
  for (let attempt = 0; handle === null; attempt++) {
    if (attempt === ATTEMPTS) {
      throw new UnreadableFileError(
        'replaced',
        `was replaced ${ATTEMPTS} times while pulse opened it`,
        'save it again once, or replace it with a regular file',
      );
    }
    handle = await openSame(path, await regularEntry(path, limit), limit);
  }
  try {
    const stats = await handle.stat();
    // Whole chunks (a multiple of 8 bytes, as /proc files such as pagemap demand), whatever the limit.
    const buffer = Buffer.alloc(CHUNK_BYTES);
    let bytes = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, bytes);
      if (bytesRead === 0) return { bytes, stats };
      bytes += bytesRead;
      if (bytes > limit) throw tooLarge(limit);
      onChunk(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
};

/** The whole file as bytes, read with `readBounded`; null when there is no such file. */
export const readBoundedBytes = async (path: string, limit: number): Promise<Buffer | null> => {
  const chunks: Buffer[] = [];
  try {
    await readBounded(path, limit, (chunk) => chunks.push(Buffer.from(chunk)));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return Buffer.concat(chunks);
};

/** The whole file as text, read with `readBounded`; null when there is no such file. */
export const readBoundedText = async (path: string, limit: number): Promise<string | null> =>
  (await readBoundedBytes(path, limit))?.toString('utf8') ?? null;

/**
 * One of pulse's own journals in `.pulse/`, read as `readBoundedBytes` reads (never through a
 * symlink, never a special file), up to `JOURNAL_LIMIT`; a refusal names the file.
 */
export const readJournal = async (path: string): Promise<Buffer | null> => {
  try {
    return await readBoundedBytes(path, JOURNAL_LIMIT);
  } catch (error) {
    throw error instanceof UnreadableFileError ? error.naming(path) : error;
  }
};
