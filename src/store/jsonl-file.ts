import { appendFile, open, readFile, truncate } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';

/** Parsed lines of a JSON-lines file, skipping blank and unparsable ones (a torn tail among them). */
export const readJsonLines = async (path: string): Promise<{ rows: unknown[]; bad: number }> => {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { rows: [], bad: 0 };
    throw error;
  }
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

/** Appends rows and fsyncs before resolving. */
export const appendJsonLines = async (path: string, rows: readonly unknown[]): Promise<void> => {
  if (rows.length === 0) return;
  const handle = await open(path, 'a');
  try {
    await handle.write(rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
    await handle.sync();
  } finally {
    await handle.close();
  }
};

/** Replaces the file's content crash-safely (temp file, fsync, rename). */
export const rewriteJsonLines = (path: string, rows: readonly unknown[]): Promise<void> =>
  writeFileAtomic(path, rows.map((row) => `${JSON.stringify(row)}\n`).join(''), { fsync: true });

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
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (text === '' || text.endsWith('\n')) return;
  const lineStart = text.lastIndexOf('\n') + 1;
  try {
    JSON.parse(text.slice(lineStart));
    await appendFile(path, '\n');
  } catch {
    await truncate(path, Buffer.byteLength(text.slice(0, lineStart)));
  }
};
