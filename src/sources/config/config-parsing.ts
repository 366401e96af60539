import type { z } from 'zod';
import { MAX_TIMER_MS } from '../../../machines/gate-decisions.js';
import { ConfigError } from './config-error.js';
import { jsonErrorOffset, lineAndColumn } from './json-error-offset.js';

/** The longest delay in whole seconds a Node timer holds; a longer one fires at once instead. */
export const MAX_TIMER_SEC = Math.floor(MAX_TIMER_MS / 1000);
/** Where a problem is reported when it has no path of its own. */
export const TOP_LEVEL = '(top level)';
const DOCS = 'See docs/sources.md for every key and its type.';

/** Keys and indexes from the top of the config down to one value. */
export type Path = readonly (string | number)[];
/** The fix to suggest for a problem at a key, by key name; `''` is the fallback. */
export type Fixes = Readonly<Record<string, string>>;

/** What one parse collects while it walks the config. */
export interface Parsing {
  file: string;
  env: Record<string, string | undefined>;
  warnings: string[];
  secrets: Set<string>;
}

/** True for a plain JSON object (not null, not an array). */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Orders by UTF-16 code units, as `<` does: the same order in every locale. */
export const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The JSON type of a value, as a problem names it. */
export const typeName = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;

/** A path as JavaScript would write it, e.g. `mcpServers.cal.args[0]`. */
export const formatPath = (path: Path): string =>
  path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    if (!/^[A-Za-z_$][\w$-]*$/.test(key)) return `${text}[${JSON.stringify(key)}]`;
    return text === '' ? key : `${text}.${key}`;
  }, '') || TOP_LEVEL;

const valueAt = (value: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (node, key) => (typeof node === 'object' && node !== null ? Reflect.get(node, key) : undefined),
    value,
  );

const problemOf = (issue: z.core.$ZodIssue, received: unknown): string => {
  const key = issue.path.at(-1);
  switch (issue.code) {
    case 'invalid_type':
      if (received === undefined && typeof key === 'string') return `"${key}" is missing`;
      return `expected ${issue.expected === 'record' ? 'object' : issue.expected}, got ${typeName(received)}`;
    case 'too_small':
      if (issue.origin === 'string') return 'must not be empty';
      return `must be ${issue.inclusive ? 'at least' : 'greater than'} ${issue.minimum}, got ${String(received)}`;
    case 'too_big':
      return `must be ${issue.inclusive ? 'at most' : 'less than'} ${issue.maximum}, got ${String(received)}`;
    case 'unrecognized_keys':
      return `has unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
    case 'invalid_value':
      return `must be ${issue.values.map((value) => JSON.stringify(value)).join(' or ')}, got ${JSON.stringify(received)}`;
    default:
      return issue.message;
  }
};

/** The fix a refinement attached, else the one for the nearest key on the path that has one. */
const fixOf = (issue: z.core.$ZodIssue, path: Path, fixes: Fixes): string => {
  const attached = issue.code === 'custom' ? issue.params?.fix : undefined;
  if (typeof attached === 'string') return attached;
  for (const key of [...path].reverse())
    if (typeof key === 'string' && Object.hasOwn(fixes, key)) return fixes[key]!;
  return fixes[''] ?? DOCS;
};

/** Parses with zod; the first issue becomes a ConfigError at its JSON path. */
export const parseWith = <T extends z.ZodType>(
  schema: T,
  value: unknown,
  at: Path,
  parsing: Parsing,
  fixes: Fixes,
): z.output<T> => {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = [...at, ...issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key))];
  throw new ConfigError({
    file: parsing.file,
    jsonPath: formatPath(path),
    problem: problemOf(issue, valueAt(value, issue.path)),
    fix: fixOf(issue, path, fixes),
  });
};

/** Warns about the keys of `raw` that `known` does not have (`$schema` is always allowed). */
export const warnUnknownKeys = (
  raw: Record<string, unknown>,
  known: object,
  at: Path,
  parsing: Parsing,
  what: string,
) => {
  const unknown = Object.keys(raw).filter((key) => !Object.hasOwn(known, key) && key !== '$schema');
  if (unknown.length === 0) return;
  const keys = unknown.map((key) => `"${key}"`).join(', ');
  const where = at.length === 0 ? 'at the top level' : `in ${formatPath(at)}`;
  parsing.warnings.push(
    `${parsing.file}: unknown key${unknown.length > 1 ? 's' : ''} ${keys} ${where} ${unknown.length > 1 ? 'are' : 'is'} ignored. Known for ${what}: ${Object.keys(known).join(', ')}`,
  );
};

/** JSON.parse's message without the text it quotes, plus the line and column where it failed. */
export const parseJson = (text: string, file: string, fix: string): unknown => {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const offset = jsonErrorOffset(text, message);
    const reason = message
      .replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, '')
      .replace(/ in JSON at position.*$/s, '');
    throw new ConfigError({
      file,
      jsonPath: offset === null ? TOP_LEVEL : lineAndColumn(text, offset),
      problem: `is not valid JSON (${reason})`,
      fix,
      cause: error,
    });
  }
};
