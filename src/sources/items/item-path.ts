/**
 * Paths into a tool's answer, as `map` and rules write them: keys joined by dots, with array
 * steps in brackets: `start.dateTime`, `attendees[0].email`, `labels[-1].name` (from the end),
 * `payload.headers[name=Subject].value` (the first element whose `name` is `Subject`).
 */

/** One step of a path. */
export type PathStep =
  | { kind: 'key'; key: string }
  | { kind: 'index'; index: number }
  | { kind: 'where'; key: string; value: string };

/** A path that does not parse; the message says where and why. */
export class PathSyntaxError extends Error {
  override name = 'PathSyntaxError';
}

const SEGMENT = /^([^.[\]]*)((?:\[[^\]]*\])*)$/;
const MAX_STEPS = 32;

const bracketStep = (inside: string, path: string): PathStep => {
  if (/^-?\d+$/.test(inside)) return { kind: 'index', index: Number(inside) };
  const equals = inside.indexOf('=');
  if (equals > 0) return { kind: 'where', key: inside.slice(0, equals), value: inside.slice(equals + 1) };
  throw new PathSyntaxError(
    `"${path}" has [${inside}]: write an index ([0], [-1] for the last) or a match ([name=Subject])`,
  );
};

/** The steps of a path; throws a PathSyntaxError for an empty key or a bracket it cannot read. */
export const parsePath = (path: string): PathStep[] => {
  if (path.trim() === '') throw new PathSyntaxError('the path is empty');
  const steps: PathStep[] = [];
  for (const segment of path.split('.')) {
    const match = SEGMENT.exec(segment);
    if (match === null || (match[1] === '' && match[2] === '')) {
      throw new PathSyntaxError(`"${path}" has an empty or unbalanced step: keys are joined by single dots`);
    }
    if (match[1] !== '') steps.push({ kind: 'key', key: match[1]! });
    for (const [, inside] of match[2]!.matchAll(/\[([^\]]*)\]/g)) steps.push(bracketStep(inside!, path));
  }
  if (steps.length > MAX_STEPS) throw new PathSyntaxError(`"${path}" has more than ${MAX_STEPS} steps`);
  return steps;
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const step = (node: unknown, next: PathStep): unknown => {
  if (next.kind === 'key') {
    if (isRecord(node)) return Object.hasOwn(node, next.key) ? node[next.key] : undefined;
    // `items.0.id` reads like `items[0].id`.
    if (Array.isArray(node) && /^\d+$/.test(next.key)) return node[Number(next.key)];
    return undefined;
  }
  if (!Array.isArray(node)) return undefined;
  if (next.kind === 'index') return node.at(next.index);
  return node.find(
    (element) =>
      isRecord(element) && Object.hasOwn(element, next.key) && String(element[next.key]) === next.value,
  );
};

/** The value at `steps` inside `value`, or undefined when any step is missing. */
export const valueAt = (value: unknown, steps: readonly PathStep[]): unknown => {
  let node = value;
  for (const next of steps) {
    node = step(node, next);
    if (node === undefined) return undefined;
  }
  return node;
};

/** A path as it is written, from its steps. */
export const formatSteps = (steps: readonly PathStep[]): string =>
  steps.reduce((text, next) => {
    if (next.kind === 'index') return `${text}[${next.index}]`;
    if (next.kind === 'where') return `${text}[${next.key}=${next.value}]`;
    return text === '' ? next.key : `${text}.${next.key}`;
  }, '');

const MAX_KEYS_SHOWN = 20;

/** What a value is, for an error: `an object with keys a, b`, `a list of 3`, `a string`. */
export const describeValue = (value: unknown): string => {
  if (Array.isArray(value)) {
    const objects = value.length > 0 && value.every(isRecord);
    return `a list of ${value.length}${objects ? ' objects' : ''}`;
  }
  if (isRecord(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0) return 'an empty object';
    const shown = keys.slice(0, MAX_KEYS_SHOWN).join(', ');
    return `an object with keys ${shown}${keys.length > MAX_KEYS_SHOWN ? ', …' : ''}`;
  }
  return value === null ? 'null' : `a ${typeof value}`;
};

/**
 * Why `steps` finds nothing in `value`: the longest prefix that does resolve, and what is
 * there, e.g. `at "start" there is an object with keys date, timeZone`.
 */
export const describeMiss = (value: unknown, steps: readonly PathStep[]): string => {
  let node = value;
  let depth = 0;
  for (; depth < steps.length; depth++) {
    const next = step(node, steps[depth]!);
    if (next === undefined) break;
    node = next;
  }
  const where = depth === 0 ? 'at the top' : `at "${formatSteps(steps.slice(0, depth))}"`;
  return `${where} there is ${describeValue(node)}`;
};
