import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { readJournal } from './read-bounded.js';
import { assertRealFolder } from './real-folder.js';
import { replaceFile } from './replace-file.js';

/**
 * Parsed lines of a JSON-lines file, skipping blank and unparsable ones (a torn tail among them).
 * Read with `readJournal`: a symlink or special file in its place is refused, naming it.
 */
export const readJsonLines = async (path: string): Promise<{ rows: unknown[]; bad: number }> => {
  const bytes = await readJournal(path);
  if (bytes === null) return { rows: [], bad: 0 };
  const text = bytes.toString('utf8');
  const rows: unknown[] = [];
  let bad = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      rows.push(JSON.parse(line));
    } catch {
      bad++;
    }
  }
  return { rows, bad };
};

/** Append, create if missing, and never through a symlink someone put in `.pulse/` (ELOOP instead). */
const APPEND_NO_FOLLOW = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

/**
 * Appends text that ends in a newline and fsyncs before resolving. A file left ending in a torn
 * or garbage line gets a newline first, so the garbage stays a line of its own (skipped on
 * reading) instead of swallowing the first line appended after it. An append that fails (a full
 * disk) is cut back to where it began, so a retry cannot leave its lines in the file twice.
 */
export const appendLines = async (path: string, text: string): Promise<void> => {
  if (text === '') return;
  assertRealFolder(dirname(path));
  const handle = await open(path, APPEND_NO_FOLLOW, 0o644);
  try {
    const { size } = await handle.stat();
    const last = Buffer.alloc(1);
    if (size > 0) await handle.read(last, 0, 1, size - 1);
    const bytes = Buffer.from(size > 0 && last[0] !== 0x0a ? `\n${text}` : text);
    try {
      // One write may land in part (a disk filling up): write the rest until it lands or fails.
      for (let written = 0; written < bytes.length; ) {
        written += (await handle.write(bytes, written, bytes.length - written)).bytesWritten;
      }
      await handle.sync();
    } catch (error) {
      await handle.truncate(size).catch(() => undefined);
      throw error;
    }
  } finally {
    await handle.close();
  }
};

/** Appends rows as JSON lines and fsyncs before resolving. */
export const appendJsonLines = (path: string, rows: readonly unknown[]): Promise<void> =>
  appendLines(path, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));

/** Replaces the file's content crash-safely (temp file, fsync, rename). */
export const rewriteJsonLines = (path: string, rows: readonly unknown[]): Promise<void> =>
  replaceFile(path, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));

/** Runs writes to one file one at a time, in call order. */
export const createWriteQueue = () => {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(write: () => Promise<T>): Promise<T> => {
    const next = tail.then(write);
    tail = next.catch(() => {});
    return next;
  };
};

/**
 * Ends a file on a whole line: a last line cut short by a crash mid-append is removed (a whole
 * one missing only its newline gets it), so the next append starts a line of its own instead of
 * joining the torn one, which would make both unreadable.
 */
export const cutTornTail = async (path: string): Promise<void> => {
  const bytes = await readJournal(path);
  if (bytes === null) return;
  const text = bytes.toString('utf8');
  if (text === '' || text.endsWith('\n')) return;
  const lineStart = text.lastIndexOf('\n') + 1;
  let whole = true;
  try {
    JSON.parse(text.slice(lineStart));
  } catch {
    whole = false;
  }
  const handle = await open(path, APPEND_NO_FOLLOW);
  try {
    if (whole) await handle.write('\n');
    else await handle.truncate(Buffer.byteLength(text.slice(0, lineStart)));
    await handle.sync();
  } finally {
    await handle.close();
  }
};
