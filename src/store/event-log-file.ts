import { appendFile, truncate } from 'node:fs/promises';
import type { EventBacklog } from '../../machines/event-index.js';
import type { EventKind, PulseEvent } from '../../machines/pulse-files.js';
import { appendLines } from './jsonl-file.js';
import { readJournal } from './read-bounded.js';

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
 * A line exactly as `eventLine` writes it (and PulseAgent, but for its spacing): no escapes in its
 * strings, a known kind. Such a line is an event for sure, so it is kept unparsed; any other line
 * is parsed at once, and kept only if it is an event. Read over the file as latin1, where one
 * character is one byte: offsets are the file's.
 */
const CANONICAL =
  /\{"id":"[^"\\\n]*","timestamp":"[^"\\\n]*","kind":"(?:created|modified|deleted)","path":"([^"\\\n]*)","sha256":(?:"[0-9a-f]{64}"|null),"size":(?:\d+|null)\}\n/y;

const ID_START = '{"id":"'.length;

/** Part of a file read as latin1, read as the UTF-8 it is (ASCII, the usual case, as it is). */
const utf8 = (latin1: string, from: number, to: number): string => {
  const part = latin1.slice(from, to);
  // Every byte below 0x80 is ASCII, the same in latin1 and UTF-8; above it, a UTF-8 sequence.
  return /[\u0080-\u00ff]/.test(part) ? Buffer.from(part, 'latin1').toString('utf8') : part;
};

/** A growable array of small numbers (line offsets, path numbers): a few bytes a line, no object each. */
class Numbers<T extends Uint32Array | Uint16Array> {
  #items: T;
  length = 0;

  constructor(readonly make: (size: number) => T) {
    this.#items = make(1024);
  }

  push(value: number): void {
    if (this.length === this.#items.length) {
      const grown = this.make(this.#items.length * 2);
      grown.set(this.#items);
      this.#items = grown;
    }
    this.#items[this.length++] = value;
  }

  at(index: number): number {
    return this.#items[index]!;
  }
}

/** The log's lines, parsed when first asked for (`at`), their ids and paths read without parsing. */
class LoggedEvents implements EventBacklog {
  readonly starts = new Numbers((size) => new Uint32Array(size));
  /** Into `paths`, for a line kept unparsed. */
  readonly pathIds = new Numbers((size) => new Uint16Array(size));
  readonly paths: string[] = [];
  /** Events parsed so far: at load, the lines not as pulse writes them; since, those asked for. */
  readonly parsed = new Map<number, PulseEvent>();

  /** The file as latin1, one character a byte: held instead of the bytes, so the log is in memory once. */
  constructor(readonly text: string) {}

  get length(): number {
    return this.starts.length;
  }

  /** Adds a line kept as bytes, from `start` to its newline. */
  addLine(start: number, pathId: number): void {
    this.starts.push(start);
    this.pathIds.push(pathId);
  }

  /** Adds an event parsed now. */
  addEvent(event: PulseEvent): void {
    this.parsed.set(this.length, event);
    this.addLine(0, 0);
  }

  at(index: number): PulseEvent {
    const known = this.parsed.get(index);
    if (known !== undefined) return known;
    const start = this.starts.at(index);
    // A line kept as bytes always parses to an event: the load checked its form.
    const event = asEvent(JSON.parse(utf8(this.text, start, this.text.indexOf('\n', start))))!;
    this.parsed.set(index, event);
    return event;
  }

  idAt(index: number): string {
    const known = this.parsed.get(index);
    if (known !== undefined) return known.id;
    const start = this.starts.at(index) + ID_START;
    return utf8(this.text, start, this.text.indexOf('"', start));
  }

  pathAt(index: number): string {
    return this.parsed.get(index)?.path ?? this.paths[this.pathIds.at(index)]!;
  }
}

/** Most paths repeat (the four files): one string each, and a small number per line. */
const pathTable = (paths: string[]) => {
  const ids = new Map<string, number>();
  return {
    /** The number of a path found as `latin1`; `decode` reads it as UTF-8 the first time. Null when full. */
    idOf(latin1: string, decode: () => string): number | null {
      const known = ids.get(latin1);
      if (known !== undefined) return known;
      if (paths.length === 0xffff) return null;
      ids.set(latin1, paths.push(intern(decode())) - 1);
      return paths.length - 1;
    },
  };
};

/**
 * Reads the whole log once and finds its events without building them: a line as pulse writes it
 * is checked by one regular expression and kept as bytes until asked for, any other line is
 * parsed at once. A torn last line (a crash mid-append) is cut off the file; any other line that
 * is not an event is skipped with a warning instead of breaking every call.
 */
export const readEventBacklog = async (
  path: string,
  { repair = true } = {},
): Promise<{ backlog: EventBacklog; warnings: string[] }> => {
  const bytes = (await readJournal(path)) ?? Buffer.alloc(0);
  const text = bytes.toString('latin1');
  const events = new LoggedEvents(text);
  const table = pathTable(events.paths);
  let skipped = 0;
  const whole = text.lastIndexOf('\n') + 1;
  for (let at = 0; at < whole; ) {
    CANONICAL.lastIndex = at;
    const match = CANONICAL.exec(text);
    const pathId =
      match === null
        ? null
        : table.idOf(match[1]!, () => {
            const from = at + match[0].indexOf('"path":"') + '"path":"'.length;
            return bytes.toString('utf8', from, from + match[1]!.length);
          });
    if (pathId !== null) {
      events.addLine(at, pathId);
      at = CANONICAL.lastIndex;
      continue;
    }
    const end = text.indexOf('\n', at);
    const line = bytes.toString('utf8', at, end);
    at = end + 1;
    if (line.trim() === '') continue;
    const event = parseLine(line);
    if (event === null) skipped++;
    else events.addEvent(event);
  }
  const warnings: string[] = [];
  const tail = bytes.toString('utf8', whole);
  if (tail.trim() !== '') {
    const event = parseLine(tail);
    if (event) {
      events.addEvent(event);
      if (repair) await appendFile(path, '\n');
    } else if (repair) {
      await truncate(path, whole);
      warnings.push(`events.jsonl ended in a torn line (${bytes.length - whole} bytes); removed it.`);
    } else {
      warnings.push(
        `events.jsonl ends in a torn line (${bytes.length - whole} bytes); pulse start removes it.`,
      );
    }
  }
  if (skipped > 0) warnings.push(`events.jsonl has ${skipped} line(s) that are not events; skipped them.`);
  return { backlog: events, warnings };
};

/** Reads the whole log once, every event parsed (what `readEventBacklog` finds, built now). */
export const readEventLog = async (path: string, { repair = true } = {}): Promise<ReadLog> => {
  const { backlog, warnings } = await readEventBacklog(path, { repair });
  return { events: Array.from({ length: backlog.length }, (_, index) => backlog.at(index)), warnings };
};

/** Appends events and fsyncs, so an event is on disk before anyone is told about it. */
export const appendEvents = (path: string, events: readonly PulseEvent[]): Promise<void> =>
  appendLines(path, events.map(eventLine).join(''));
