import { createHash } from 'node:crypto';

/** One item a source listed, reduced to what the inbox and the thinker need. */
export interface ExtractedItem {
  itemId: string;
  title: string;
  /** ISO 8601, or null when the item has no start that parses as a date. */
  startsAt: string | null;
  /** The item's canonical JSON, cut to 500 characters. */
  detail: string;
}

/** A tool result with no items to read; the message says what was wrong. */
export class ExtractError extends Error {
  override name = 'ExtractError';
}

const LIST_FIELDS = ['items', 'events', 'messages', 'results', 'data'] as const;
const ID_FIELDS = ['id', 'uid', 'eventId', 'messageId', 'threadId'] as const;
const TITLE_FIELDS = ['title', 'summary', 'subject', 'name', 'description'] as const;
const START_FIELDS = ['start', 'startsAt', 'start_time', 'startTime', 'starts_at', 'date'] as const;

const MAX_ITEMS = 10_000;
const MAX_DEPTH = 64;
const DETAIL_CHARS = 500;
const TITLE_CHARS = 300;
/** Longer ids are hashed, so a garbage id cannot bloat the seen store. */
const ID_CHARS = 256;
const TOO_DEEP = '[nested too deep]';
const CIRCULAR = '[circular]';

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Cuts to at most `max` characters without splitting a surrogate pair. */
const cut = (text: string, max: number): string => {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return text.slice(0, end);
};

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const writeCanonical = (value: unknown, depth: number, ancestors: Set<object>, out: string[]): void => {
  if (typeof value === 'string' || typeof value === 'boolean') return void out.push(JSON.stringify(value));
  if (typeof value === 'number')
    return void out.push(Number.isFinite(value) ? JSON.stringify(value) : 'null');
  if (typeof value === 'bigint') return void out.push(JSON.stringify(String(value)));
  if (typeof value !== 'object' || value === null) return void out.push('null');
  if (depth >= MAX_DEPTH) return void out.push(JSON.stringify(TOO_DEEP));
  if (ancestors.has(value)) return void out.push(JSON.stringify(CIRCULAR));
  ancestors.add(value);
  if (Array.isArray(value)) {
    out.push('[');
    value.forEach((element, index) => {
      if (index > 0) out.push(',');
      writeCanonical(element, depth + 1, ancestors, out);
    });
    out.push(']');
  } else {
    out.push('{');
    let first = true;
    for (const key of Object.keys(value).sort(compareText)) {
      const child = (value as Json)[key];
      if (child === undefined || typeof child === 'function' || typeof child === 'symbol') continue;
      out.push(first ? '' : ',', JSON.stringify(key), ':');
      writeCanonical(child, depth + 1, ancestors, out);
      first = false;
    }
    out.push('}');
  }
  ancestors.delete(value);
};

/** JSON with keys sorted at every level; values nested deeper than 64 levels become a marker. */
export const canonicalJson = (value: unknown): string => {
  const out: string[] = [];
  writeCanonical(value, 0, new Set(), out);
  return out.join('');
};

const oneLine = (text: string, max: number): string =>
  cut(
    // Only the head can be shown, so only the head is scanned: huge strings stay cheap.
    text
      .slice(0, max * 4)
      .replace(/\s+/g, ' ')
      .trim(),
    max,
  );

const idOf = (item: Json): string | null => {
  for (const field of ID_FIELDS) {
    const value = item[field];
    const id = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
    if (typeof id === 'string' && id !== '') return id.length > ID_CHARS ? `sha256:${sha256(id)}` : id;
  }
  return null;
};

const titleOf = (item: Json): string => {
  for (const field of TITLE_FIELDS) {
    const value = item[field];
    const title = typeof value === 'string' ? oneLine(value, TITLE_CHARS) : '';
    if (title !== '') return title;
  }
  return '(untitled)';
};

/** A four-digit year keeps Date.parse's leniency out: it reads "1" as 2001-01-01. */
const isoDate = (value: unknown): string | null => {
  if (typeof value !== 'string' || value.length > 100 || !/\d{4}/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
};

const startOf = (item: Json): string | null => {
  for (const field of START_FIELDS) {
    const value = item[field];
    // Google Calendar writes { dateTime } for timed events and { date } for all-day ones.
    const start = isRecord(value) ? (isoDate(value.dateTime) ?? isoDate(value.date)) : isoDate(value);
    if (start !== null) return start;
  }
  return null;
};

const itemOf = (item: Json): ExtractedItem => {
  const json = canonicalJson(item);
  return {
    itemId: idOf(item) ?? sha256(json),
    title: titleOf(item),
    startsAt: startOf(item),
    detail: cut(json, DETAIL_CHARS),
  };
};

const listIn = (value: unknown): unknown[] | null => {
  if (Array.isArray(value)) return value;
  if (!isRecord(value)) return null;
  for (const field of LIST_FIELDS) {
    const list = value[field];
    if (Array.isArray(list)) return list;
  }
  return null;
};

const textsOf = (result: Json): string[] =>
  Array.isArray(result.content)
    ? result.content.flatMap((block) =>
        isRecord(block) && block.type === 'text' && typeof block.text === 'string' ? [block.text] : [],
      )
    : [];

const parsedJson = (text: string): unknown => {
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** `structuredContent` first; else the first text block whose JSON holds a list. */
const listOf = (result: Json): unknown[] | null => {
  const structured = listIn(result.structuredContent);
  if (structured !== null) return structured;
  for (const text of textsOf(result)) {
    const list = listIn(parsedJson(text));
    if (list !== null) return list;
  }
  return null;
};

/** What the result held instead, so `pulse sources test` can show why nothing was found. */
const whatWasThere = (result: Json): string => {
  const structured = result.structuredContent;
  const keys = isRecord(structured) ? Object.keys(structured) : [];
  const parts = [
    ...(isRecord(structured)
      ? [
          `structuredContent with keys ${keys.slice(0, 10).join(', ') || '(none)'}${keys.length > 10 ? ', …' : ''}`,
        ]
      : []),
    `${textsOf(result).length} text block(s) without a JSON list`,
  ];
  return parts.join(' and ');
};

/**
 * Reads the items of a `tools/call` result by the vendor-neutral conventions of
 * docs/sources.md. Throws an ExtractError when the tool reported an error or no list is found.
 */
export const extractItems = (result: unknown): ExtractedItem[] => {
  if (!isRecord(result)) {
    const got = result === null ? 'null' : Array.isArray(result) ? 'an array' : typeof result;
    throw new ExtractError(`the tool result is not an object (got ${got})`);
  }
  if (result.isError === true) {
    const text = oneLine(textsOf(result)[0] ?? '', 200);
    throw new ExtractError(`the tool answered isError: ${text || '(no text)'}`);
  }
  const list = listOf(result);
  if (list === null) {
    throw new ExtractError(
      `no list found: expected one of ${LIST_FIELDS.join(', ')}, or a JSON array (got ${whatWasThere(result)})`,
    );
  }
  const items: ExtractedItem[] = [];
  for (const entry of list) {
    if (items.length === MAX_ITEMS) break;
    if (isRecord(entry)) items.push(itemOf(entry));
  }
  return items;
};
