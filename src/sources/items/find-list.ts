import { describeMiss, describeValue, formatSteps, type PathStep, valueAt } from './item-path.js';

/**
 * Where the items of a `tools/call` result are, by the conventions of docs/sources.md, or by
 * a source's `map.items` path. Returns the raw list; what each entry means is extract.ts's job.
 */

type Json = Record<string, unknown>;

/** The conventional list fields, in the order they are tried; `result` is the Python SDK's wrapper. */
export const LIST_FIELDS = ['items', 'events', 'messages', 'results', 'data', 'result'] as const;
/** Objects that wrap the real answer: `{"result": {...}}`, `{"data": {...}}`. */
const WRAPPER_FIELDS = ['result', 'data'] as const;
const RESOURCE_BLOCKS = new Set(['resource_link', 'resource']);

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const parsedJson = (text: string): unknown => {
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** The content blocks of a result that are objects. */
const blocksOf = (result: Json): Json[] =>
  Array.isArray(result.content) ? result.content.filter(isRecord) : [];

/** The text of each text block. */
export const textsOf = (result: Json): string[] =>
  blocksOf(result).flatMap((block) =>
    block.type === 'text' && typeof block.text === 'string' ? [block.text] : [],
  );

/** The JSON of each text block that holds JSON. */
const jsonTextsOf = (result: Json): unknown[] =>
  textsOf(result).flatMap((text) => {
    const value = parsedJson(text);
    return value === undefined ? [] : [value];
  });

/** A list named by convention: a bare array, a conventional field, or one inside a wrapper. */
const namedListIn = (value: unknown, unwrap = true): unknown[] | null => {
  if (Array.isArray(value)) return value;
  if (!isRecord(value)) return null;
  for (const field of LIST_FIELDS) if (Array.isArray(value[field])) return value[field];
  if (!unwrap) return null;
  for (const field of WRAPPER_FIELDS) {
    const inner = value[field];
    if (isRecord(inner)) return namedListIn(inner, false) ?? firstListOfObjects(inner);
  }
  return null;
};

/** The first non-empty array of objects among an object's fields; else `[]` if one holds an empty array. */
const firstListOfObjects = (value: Json): unknown[] | null => {
  let empty: unknown[] | null = null;
  for (const child of Object.values(value)) {
    if (!Array.isArray(child)) continue;
    if (child.length > 0 && child.every(isRecord)) return child;
    if (child.length === 0) empty ??= child;
  }
  return empty;
};

/** `resource_link` blocks as they are; embedded `resource` blocks flattened (without binary blobs). */
const resourceItems = (result: Json): Json[] =>
  blocksOf(result).flatMap((block): Json[] => {
    if (!RESOURCE_BLOCKS.has(String(block.type))) return [];
    if (block.type === 'resource_link') return [block];
    if (!isRecord(block.resource)) return [];
    const { blob: _blob, ...resource } = block.resource;
    return [{ type: 'resource', ...resource }];
  });

/** True for an object with one of the conventional id fields. */
export type HasId = (value: Json) => boolean;

/**
 * The list in a result without a map, trying in turn: structuredContent; a text block holding
 * a list (a JSON array, a conventional field, a `result` wrapper); several text blocks that are
 * each one JSON object (one item each, as the Python SDK writes a list); `resource_link` and
 * embedded `resource` blocks; the first list of objects in a JSON text block; one JSON object
 * with an id. `content: []` is an empty list. Null when none of these holds.
 */
export const conventionalList = (result: Json, hasId: HasId): unknown[] | null => {
  const structured = result.structuredContent;
  const fromStructured =
    namedListIn(structured) ?? (isRecord(structured) ? firstListOfObjects(structured) : null);
  if (fromStructured !== null) return fromStructured;

  const jsonTexts = jsonTextsOf(result);
  for (const value of jsonTexts) {
    const list = namedListIn(value);
    if (list !== null) return list;
  }
  const objects = jsonTexts.filter(isRecord);
  if (objects.length > 1) return objects;
  const resources = resourceItems(result);
  if (resources.length > 0) return resources;
  for (const value of objects) {
    const list = firstListOfObjects(value);
    if (list !== null) return list;
  }
  if (objects.length === 1 && hasId(objects[0]!)) return objects;
  if (Array.isArray(result.content) && result.content.length === 0 && structured === undefined) return [];
  return null;
};

/** The places a `map.items` path is tried: structuredContent, then each JSON text block. */
const rootsOf = (result: Json): { name: string; value: unknown }[] => [
  ...(result.structuredContent === undefined
    ? []
    : [{ name: 'structuredContent', value: result.structuredContent }]),
  ...textsOf(result).flatMap((text, index) => {
    const value = parsedJson(text);
    return value === undefined ? [] : [{ name: `text block ${index + 1}`, value }];
  }),
];

/** The list at `map.items`, or why there is none there: the path, and what each place holds instead. */
export const mappedList = (result: Json, steps: readonly PathStep[]): unknown[] | string => {
  const roots = rootsOf(result);
  for (const root of roots) {
    const list = valueAt(root.value, steps);
    if (Array.isArray(list)) return list;
  }
  const path = formatSteps(steps);
  if (roots.length === 0)
    return `map.items "${path}": the result has no structuredContent and no JSON text (${describeContent(result)})`;
  const misses = roots.map((root) => {
    const found = valueAt(root.value, steps);
    const why = found === undefined ? describeMiss(root.value, steps) : `it holds ${describeValue(found)}`;
    return `in ${root.name}, ${why}`;
  });
  return `map.items "${path}" is not a list: ${misses.join('; ')}`;
};

const describeBlock = (block: Json): string => {
  if (block.type !== 'text' || typeof block.text !== 'string') return String(block.type ?? 'untyped');
  const value = parsedJson(block.text);
  return value === undefined ? 'text (not JSON)' : `text (JSON: ${describeValue(value)})`;
};

const MAX_BLOCKS_SHOWN = 5;

/** The content blocks, by type, e.g. `2 blocks: text (not JSON), image`. */
export const describeContent = (result: Json): string => {
  if (!Array.isArray(result.content)) return 'no content';
  const blocks = result.content.map((block) => (isRecord(block) ? describeBlock(block) : typeof block));
  const shown = blocks.slice(0, MAX_BLOCKS_SHOWN).join(', ');
  const more = blocks.length > MAX_BLOCKS_SHOWN ? `, and ${blocks.length - MAX_BLOCKS_SHOWN} more` : '';
  return `${blocks.length} content block${blocks.length === 1 ? '' : 's'}${blocks.length > 0 ? `: ${shown}${more}` : ''}`;
};

/** What a result held instead of a list: structuredContent's keys and the content blocks. */
export const describeResult = (result: Json): string => {
  const structured = result.structuredContent;
  const parts = structured === undefined ? [] : [`structuredContent is ${describeValue(structured)}`];
  return [...parts, describeContent(result)].join('; ');
};
