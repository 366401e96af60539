import type { FieldValue } from '../../../machines/external.js';
import { type PathStep, parsePath, valueAt } from './item-path.js';

/** At most this many characters of a text value are kept for the rules. */
const FIELD_TEXT_CHARS = 200;

/** A rule's field path, parsed once. */
export interface FieldPath {
  path: string;
  steps: PathStep[];
}

/** Parses the field paths the source's rules name (the config validated them). */
export const fieldPathsOf = (paths: readonly string[]): FieldPath[] =>
  paths.map((path) => ({ path, steps: parsePath(path) }));

const scalarOf = (value: unknown): FieldValue | undefined => {
  if (typeof value === 'string') return value.slice(0, FIELD_TEXT_CHARS);
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'boolean' || value === null) return value;
  return undefined;
};

/**
 * The values at the rules' paths that are text, numbers, booleans or null (text cut to 200
 * characters), by path as the rule writes it: what the rule thinker reads long after the poll.
 */
export const fieldValues = (item: unknown, paths: readonly FieldPath[]): Record<string, FieldValue> =>
  // fromEntries: a path named "__proto__" stays a key instead of setting the prototype.
  Object.fromEntries(
    paths.flatMap(({ path, steps }) => {
      const value = scalarOf(valueAt(item, steps));
      return value === undefined ? [] : [[path, value]];
    }),
  );
