import { PULSE_TOOLS } from '../hooks/pulse-tools.js';
import type { ChangeResult } from './file-edit.js';
import { isJsonObject, type JsonChange } from './json-edit.js';

/**
 * Claude Code's permission rules for what the replan loop needs and Claude asks for in `-p` and
 * default modes: each of pulse's tools (nothing else of any server's), and editing `.pulse/plan.md`
 * (nothing else of the project's; `Edit(…)` grants Write and Edit of that one file).
 */
export const claudeToolRules = (server = 'pulse'): string[] => [
  ...PULSE_TOOLS.map((tool) => `mcp__${server}__${tool}`),
  'Edit(/.pulse/plan.md)',
];

/** Adds each string to the list at `path` (creating the objects on the way), keeping the user's entries. */
export const listIncludes =
  (path: readonly string[], values: readonly string[]): JsonChange =>
  (doc) => {
    let at = doc;
    for (const key of path.slice(0, -1)) {
      const next = at[key] ?? {};
      if (!isJsonObject(next)) return notAnObject(path.slice(0, path.indexOf(key) + 1));
      at[key] = next;
      at = next;
    }
    const last = path.at(-1)!;
    const list = at[last] ?? [];
    if (!Array.isArray(list)) {
      return {
        kind: 'invalid',
        problem: `has a "${path.join('.')}" that is not a list`,
        fix: `Make "${path.join('.')}" a list, then run this again.`,
      };
    }
    const missing = values.filter((value) => !list.includes(value));
    if (missing.length === 0) return { kind: 'unchanged' };
    at[last] = [...list, ...missing];
    return { kind: 'changed' };
  };

const notAnObject = (path: readonly string[]): ChangeResult => ({
  kind: 'invalid',
  problem: `has a "${path.join('.')}" that is not an object`,
  fix: `Make "${path.join('.')}" an object, then run this again.`,
});

/** Several changes to one file, in order: the first refusal wins; changed when any changed. */
export const allOf =
  (...changes: JsonChange[]): JsonChange =>
  (doc, options) => {
    const replaced: string[] = [];
    let changed = false;
    for (const change of changes) {
      const result = change(doc, options);
      if (result.kind === 'conflict' || result.kind === 'invalid') return result;
      if (result.kind === 'changed') {
        changed = true;
        if (result.replaced) replaced.push(result.replaced);
      }
    }
    if (!changed) return { kind: 'unchanged' };
    return replaced.length > 0 ? { kind: 'changed', replaced: replaced.join('; ') } : { kind: 'changed' };
  };
