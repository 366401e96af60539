import { constants, type Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';

/** A user file pulse will not read (too big, not a regular file): what it is, and the fix. */
export class UnreadableFileError extends Error {
  override name = 'UnreadableFileError';

  constructor(
    readonly kind: 'too-large' | 'not-regular',
    readonly problem: string,
    readonly fix: string,
  ) {
    super(`${problem}: ${fix}`);
  }
}

/** Opening never waits for a writer (a FIFO put in place of a file) and follows a symlinked file, as reading should. */
const READ_NO_WAIT = constants.O_RDONLY | constants.O_NONBLOCK;
const CHUNK_BYTES = 256 * 1024;

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

const tooLarge = (limit: number, size?: number) =>
  new UnreadableFileError(
    'too-large',
    `${size === undefined ? 'holds' : `is ${size} bytes,`} more than the limit of ${limitText(limit)}`,
    'make it smaller',
  );

/**
 * Reads a user file in chunks, at most `limit` bytes, counting the bytes it actually reads: a
 * stat's size is no bound (a /proc file says 0 and never ends). Each chunk goes to `onChunk` as
 * it is read (a view, valid during the call only), so nothing file-sized is held. Throws
 * `UnreadableFileError` for a file over the limit or one that is not a regular file (checked
 * before opening, so no device is opened, and again on the descriptor, which never waits on a
 * FIFO); other errors (ENOENT, ELOOP, EACCES) are thrown as they are. Returns the bytes read.
 */
export const readBounded = async (
  path: string,
  limit: number,
  onChunk: (chunk: Buffer) => void,
): Promise<{ bytes: number; stats: Stats }> => {
  const before = await stat(path);
  if (!before.isFile()) throw notRegular(before);
  if (before.size > limit) throw tooLarge(limit, before.size);
  const handle = await open(path, READ_NO_WAIT);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notRegular(stats);
    if (stats.size > limit) throw tooLarge(limit, stats.size);
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

/** The whole file as text, read with `readBounded`; null when there is no such file. */
export const readBoundedText = async (path: string, limit: number): Promise<string | null> => {
  const chunks: Buffer[] = [];
  try {
    await readBounded(path, limit, (chunk) => chunks.push(Buffer.from(chunk)));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return Buffer.concat(chunks).toString('utf8');
};
