const MAX_DEPTH = 64;
const TOO_DEEP = '[nested too deep]';
const CIRCULAR = '[circular]';

type Json = Record<string, unknown>;

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Where JSON text is written: stops taking parts once `limit` characters are in. */
interface Sink {
  parts: string[];
  length: number;
  limit: number;
}

const put = (sink: Sink, text: string) => {
  sink.parts.push(text);
  sink.length += text.length;
};

const isFull = (sink: Sink) => sink.length > sink.limit;

const writeValue = (value: unknown, depth: number, ancestors: Set<object>, sink: Sink): void => {
  if (isFull(sink)) return;
  if (typeof value === 'string' || typeof value === 'boolean') return void put(sink, JSON.stringify(value));
  if (typeof value === 'number')
    return void put(sink, Number.isFinite(value) ? JSON.stringify(value) : 'null');
  if (typeof value === 'bigint') return void put(sink, JSON.stringify(String(value)));
  if (typeof value !== 'object' || value === null) return void put(sink, 'null');
  if (depth >= MAX_DEPTH) return void put(sink, JSON.stringify(TOO_DEEP));
  if (ancestors.has(value)) return void put(sink, JSON.stringify(CIRCULAR));
  ancestors.add(value);
  if (Array.isArray(value)) {
    put(sink, '[');
    value.forEach((element, index) => {
      if (index > 0) put(sink, ',');
      writeValue(element, depth + 1, ancestors, sink);
    });
    put(sink, ']');
  } else {
    const keys = Object.keys(value).sort(compareText);
    writeEntries(
      keys.map((key) => [key, (value as Json)[key]]),
      depth,
      ancestors,
      sink,
    );
  }
  ancestors.delete(value);
};

const writeEntries = (
  entries: readonly (readonly [string, unknown])[],
  depth: number,
  ancestors: Set<object>,
  sink: Sink,
) => {
  put(sink, '{');
  let first = true;
  for (const [key, child] of entries) {
    if (child === undefined || typeof child === 'function' || typeof child === 'symbol') continue;
    put(sink, first ? '' : ',');
    put(sink, JSON.stringify(key));
    put(sink, ':');
    writeValue(child, depth + 1, ancestors, sink);
    first = false;
  }
  put(sink, '}');
};

/** JSON with keys sorted at every level; values nested deeper than 64 levels become a marker. */
export const canonicalJson = (value: unknown): string => {
  const sink: Sink = { parts: [], length: 0, limit: Number.POSITIVE_INFINITY };
  writeValue(value, 0, new Set(), sink);
  return sink.parts.join('');
};

/**
 * A JSON object of `entries` in the order given (their values canonical), written only as far
 * as `limit` characters need: a 10 MB mail body costs no more than a short one.
 */
export const orderedJsonHead = (entries: readonly (readonly [string, unknown])[], limit: number): string => {
  const sink: Sink = { parts: [], length: 0, limit };
  writeEntries(entries, 0, new Set(), sink);
  return sink.parts.join('');
};
