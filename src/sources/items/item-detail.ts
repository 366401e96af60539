import { orderedJsonHead } from './canonical-json.js';
import type { PathStep } from './item-path.js';

export const DETAIL_CHARS = 500;

type Json = Record<string, unknown>;

/** A value already picked from the item (its title, start, mapped detail), under its path. */
export interface PickedField {
  path: string;
  steps: readonly PathStep[];
  value: unknown;
}

/** Text fields that say what an item is about, shown right after the picked ones. */
const ABOUT_FIELDS = ['summary', 'body', 'description', 'snippet', 'text', 'message', 'content'];

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `value` without the leaf at `steps` (only paths of plain keys), copying only what it changes. */
const without = (value: unknown, steps: readonly PathStep[]): unknown => {
  const [first, ...rest] = steps;
  if (first?.kind !== 'key' || !isRecord(value) || !Object.hasOwn(value, first.key)) return value;
  const { [first.key]: child, ...others } = value;
  return rest.length === 0 ? others : { ...others, [first.key]: without(child, rest) };
};

/** Cuts to at most `max` characters without splitting a surrogate pair. */
export const cut = (text: string, max: number): string => {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return text.slice(0, end);
};

/**
 * The item as a JSON object whose first keys are what a reader needs (the picked fields, under
 * their paths, then summary, body, description…), then the rest in the source's order, cut to
 * 500 characters. Key-sorted JSON put a calendar event's `attendees` and `creator` before its
 * `start` and `summary`, and the cut dropped those.
 */
export const detailOf = (item: Json, picked: readonly PickedField[]): string => {
  const entries: [string, unknown][] = [];
  const written = new Set<string>();
  let rest: unknown = item;
  for (const field of picked) {
    if (written.has(field.path)) continue;
    entries.push([field.path, field.value]);
    written.add(field.path);
    rest = without(rest, field.steps);
  }
  const remaining = isRecord(rest) ? rest : {};
  for (const key of ABOUT_FIELDS) {
    if (written.has(key) || !Object.hasOwn(remaining, key)) continue;
    entries.push([key, remaining[key]]);
    written.add(key);
  }
  for (const [key, value] of Object.entries(remaining)) if (!written.has(key)) entries.push([key, value]);
  return cut(orderedJsonHead(entries, DETAIL_CHARS), DETAIL_CHARS);
};
