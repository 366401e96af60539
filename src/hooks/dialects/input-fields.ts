import type { HookJson } from '../dialect.js';

// Readers for the loosely typed JSON agents send their hooks.

/** Whether a value is a JSON object. */
export const isObject = (value: unknown): value is HookJson =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A string field, or undefined. */
export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** A shell tool may pass argv as an array. */
export const commandOf = (value: unknown): string | undefined =>
  Array.isArray(value) ? value.filter((part) => typeof part === 'string').join(' ') : text(value);

/** The files an `apply_patch` envelope adds, updates, deletes or moves to. */
export const patchPaths = (patch: string): string[] =>
  [...patch.matchAll(/^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$/gm)].map((m) => m[1]!.trim());

/**
 * The `agent_id` pulse's own tools answer with, in a tool's output as the agent passes it to an
 * after-tool hook: as text (Claude Code) or as the result object (Codex).
 */
export const agentIdIn = (output: unknown): string | null => {
  if (output === undefined || output === null) return null;
  const text = typeof output === 'string' ? output : JSON.stringify(output);
  const match = /"agent_id\\?"\s*:\s*\\?"([^"\\]{1,300})/.exec(text);
  return match?.[1] ?? null;
};

/** A list of the paths that are strings. */
export const pathsOf = (...values: unknown[]): string[] =>
  values.filter((value): value is string => typeof value === 'string');
