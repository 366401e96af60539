import { appendFile, open, readFile, truncate } from 'node:fs/promises';
import type { EventKind, PulseEvent } from '../../machines/pulse-files.js';

const KINDS: ReadonlySet<string> = new Set<EventKind>(['created', 'modified', 'deleted']);

const asEvent = (value: unknown): PulseEvent | null => {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v.id !== 'string' || typeof v.path !== 'string' || typeof v.kind !== 'string') return null;
  if (!KINDS.has(v.kind)) return null;
  return {
    id: v.id,
    timestamp: typeof v.timestamp === 'string' ? v.timestamp : '',
    kind: v.kind as EventKind,
    path: v.path,
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

/**
 * Reads the whole log once. A torn last line (a crash mid-append) is cut off the file; any
 * other line that is not an event is skipped with a warning instead of breaking every call.
 */
export const readEventLog = async (path: string, { repair = true } = {}): Promise<ReadLog> => {
  let buffer: Buffer;
  try {
    buffer = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { events: [], warnings: [] };
    throw error;
  }
  const warnings: string[] = [];
  const text = buffer.toString('utf8');
  const lines = text.split('\n');
  const tail = lines.pop() ?? '';
  const events: PulseEvent[] = [];
  let skipped = 0;
  for (const line of lines) {
    if (line.trim() === '') continue;
    let event: PulseEvent | null = null;
    try {
      event = asEvent(JSON.parse(line));
    } catch {}
    if (event) events.push(event);
    else skipped++;
  }
  if (tail.trim() !== '') {
    let event: PulseEvent | null = null;
    try {
      event = asEvent(JSON.parse(tail));
    } catch {}
    if (event) {
      events.push(event);
      if (repair) await appendFile(path, '\n');
    } else if (repair) {
      await truncate(path, buffer.length - Buffer.byteLength(tail));
      warnings.push(`events.jsonl ended in a torn line (${Buffer.byteLength(tail)} bytes); removed it.`);
    } else {
      warnings.push(
        `events.jsonl ends in a torn line (${Buffer.byteLength(tail)} bytes); pulse start removes it.`,
      );
    }
  }
  if (skipped > 0) warnings.push(`events.jsonl has ${skipped} line(s) that are not events; skipped them.`);
  return { events, warnings };
};

/** Appends events and fsyncs, so an event is on disk before anyone is told about it. */
export const appendEvents = async (path: string, events: readonly PulseEvent[]): Promise<void> => {
  if (events.length === 0) return;
  const handle = await open(path, 'a');
  try {
    await handle.write(events.map(eventLine).join(''));
    await handle.sync();
  } finally {
    await handle.close();
  }
};
