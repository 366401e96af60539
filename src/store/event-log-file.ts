import { appendFile, open, truncate } from 'node:fs/promises';
import type { EventKind, PulseEvent } from '../../machines/pulse-files.js';
import { appendLines } from './jsonl-file.js';

const KINDS: ReadonlySet<string> = new Set<EventKind>(['created', 'modified', 'deleted']);

// A long log repeats a handful of paths: share one string each instead of one per event.
const interned = new Map<string, string>();
const intern = (text: string): string => {
  const known = interned.get(text);
  if (known !== undefined) return known;
  if (interned.size < 64) interned.set(text, text);
  return text;
};

const asEvent = (value: unknown): PulseEvent | null => {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v.id !== 'string' || typeof v.path !== 'string' || typeof v.kind !== 'string') return null;
  if (!KINDS.has(v.kind)) return null;
  return {
    id: v.id,
    timestamp: typeof v.timestamp === 'string' ? v.timestamp : '',
    kind: v.kind as EventKind,
    path: intern(v.path),
    sha256: typeof v.sha256 === 'string' ? v.sha256 : null,
    size: typeof v.size === 'number' ? v.size : null,
  };
};

/** One event as a line of `events.jsonl`, with PulseAgent's key order. */
export const eventLine = (event: PulseEvent): string =>
  `${JSON.stringify({
    id: event.id,
    timestamp: event.timestamp,
    kind: event.kind,
    path: event.path,
    sha256: event.sha256,
    size: event.size,
  })}\n`;

export interface ReadLog {
  events: PulseEvent[];
  warnings: string[];
}

const parseLine = (line: string): PulseEvent | null => {
  try {
    return asEvent(JSON.parse(line));
  } catch {
    return null;
  }
};

/**
 * Reads the whole log once, streaming it line by line so a long history does not leave a
 * file-sized string (and the heap it grew) behind. A torn last line (a crash mid-append) is
 * cut off the file; any other line that is not an event is skipped with a warning instead of
 * breaking every call.
 */
export const readEventLog = async (path: string, { repair = true } = {}): Promise<ReadLog> => {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { events: [], warnings: [] };
    throw error;
  }
  const events: PulseEvent[] = [];
  let skipped = 0;
  // Lines are split on the newline byte, so a multi-byte character is never cut in two.
  let tail: Buffer = Buffer.alloc(0);
  /** File offset of `tail`'s first byte: where a torn line starts. */
  let tailStart = 0;
  try {
    for await (const chunk of handle.createReadStream({ highWaterMark: 1 << 20, autoClose: false })) {
      const data: Buffer = tail.length > 0 ? Buffer.concat([tail, chunk as Buffer]) : (chunk as Buffer);
      let from = 0;
      for (let newline = data.indexOf(0x0a, from); newline !== -1; newline = data.indexOf(0x0a, from)) {
        const line = data.toString('utf8', from, newline);
        from = newline + 1;
        if (line.trim() === '') continue;
        const event = parseLine(line);
        if (event) events.push(event);
        else skipped++;
      }
      tailStart += from;
      tail = Buffer.from(data.subarray(from));
    }
  } finally {
    await handle.close();
  }
  const warnings: string[] = [];
  const tailText = tail.toString('utf8');
  if (tailText.trim() !== '') {
    const event = parseLine(tailText);
    if (event) {
      events.push(event);
      if (repair) await appendFile(path, '\n');
    } else if (repair) {
      await truncate(path, tailStart);
      warnings.push(`events.jsonl ended in a torn line (${tail.length} bytes); removed it.`);
    } else {
      warnings.push(`events.jsonl ends in a torn line (${tail.length} bytes); pulse start removes it.`);
    }
  }
  if (skipped > 0) warnings.push(`events.jsonl has ${skipped} line(s) that are not events; skipped them.`);
  return { events, warnings };
};

/** Appends events and fsyncs, so an event is on disk before anyone is told about it. */
export const appendEvents = (path: string, events: readonly PulseEvent[]): Promise<void> =>
  appendLines(path, events.map(eventLine).join(''));
