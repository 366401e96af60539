import type { ChangeResult } from './file-edit.js';
import { isJsonObject, type JsonChange, type JsonObject } from './json-edit.js';

/** One hook pulse registers: the command for an event, and the end every pulse command for it has. */
export interface HookSpec {
  event: string;
  command: string;
  /** A handler whose command ends so but differs is a pulse hook from another clone or node. */
  suffix: string;
  /** This clone's command as an older setup wrote it: brought up to date without `force`. */
  older: string;
}

/**
 * How an agent's hooks file lists handlers under `hooks.<event>`: Claude Code and Codex put them in
 * matcher groups (`[{ matcher?, hooks: [{ type, command, timeout }] }]`), Cursor lists them directly.
 */
interface HookLayout {
  handlers(list: unknown[]): JsonObject[];
  entry(command: string): JsonObject;
  prepare?(doc: JsonObject): void;
}

/** Claude Code and Codex: no matcher, so the hook runs for every tool (and every session start). */
export const groupedLayout = (timeoutSeconds: number): HookLayout => ({
  handlers: (list) =>
    list.flatMap((group) =>
      isJsonObject(group) && Array.isArray(group.hooks) ? group.hooks.filter(isJsonObject) : [],
    ),
  entry: (command) => ({ hooks: [{ type: 'command', command, timeout: timeoutSeconds }] }),
});

/** Cursor's `{ "version": 1, "hooks": { "<event>": [{ "command" }] } }`. */
export const flatLayout: HookLayout = {
  handlers: (list) => list.filter(isJsonObject),
  entry: (command) => ({ command }),
  prepare: (doc) => {
    doc.version ??= 1;
  },
};

const invalid = (problem: string): ChangeResult => ({
  kind: 'invalid',
  problem,
  fix: 'Correct it by hand (the agent would not read it either), then run this again.',
});

/**
 * Adds each hook to `hooks.<event>` unless a handler already runs exactly its command, keeping every
 * other hook. This clone's older command is updated in place; a pulse hook with other paths is a
 * conflict, replaced in place with `force`.
 */
export const hooksChange =
  (layout: HookLayout, specs: HookSpec[]): JsonChange =>
  (doc, { force, forceCommand }) => {
    const hooks = doc.hooks ?? {};
    if (!isJsonObject(hooks)) return invalid('has a "hooks" that is not an object');
    const stale: Array<{ handler: JsonObject; command: string }> = [];
    const older: Array<{ handler: JsonObject; command: string }> = [];
    const missing: HookSpec[] = [];
    for (const spec of specs) {
      const list = hooks[spec.event] ?? [];
      if (!Array.isArray(list)) return invalid(`has a "hooks.${spec.event}" that is not a list`);
      const handlers = layout.handlers(list);
      if (handlers.some((handler) => handler.command === spec.command)) continue;
      const old = handlers.find(
        (handler) => typeof handler.command === 'string' && handler.command.endsWith(spec.suffix),
      );
      if (old === undefined) missing.push(spec);
      else (old.command === spec.older ? older : stale).push({ handler: old, command: spec.command });
    }
    if (stale.length > 0 && !force) {
      return {
        kind: 'conflict',
        problem: `has pulse hooks that run another pulse or node (${String(stale[0]!.handler.command)}); left as they are`,
        fix: `\`${forceCommand}\` points them at this pulse (after a backup).`,
      };
    }
    if (stale.length === 0 && older.length === 0 && missing.length === 0) return { kind: 'unchanged' };
    layout.prepare?.(doc);
    doc.hooks = hooks;
    for (const { handler, command } of [...older, ...stale]) handler.command = command;
    for (const spec of missing) {
      const list = (hooks[spec.event] ?? []) as unknown[];
      list.push(layout.entry(spec.command));
      hooks[spec.event] = list;
    }
    return stale.length > 0
      ? { kind: 'changed', replaced: `${stale.length} pulse hook command(s) of another pulse or node` }
      : { kind: 'changed' };
  };
