import type { HookAgent } from '../hooks/events.js';
import type { ChangeResult } from './file-edit.js';
import { findPulseHook, type HookLayout, type HookTarget, reachesTarget } from './hook-handlers.js';
import { isJsonObject, type JsonChange, type JsonObject } from './json-edit.js';

/** One hook pulse registers: the event, and the handler that should stand under it. */
export interface HookSpec {
  event: string;
  handler: JsonObject;
}

/** Claude Code and Codex: no matcher, so the hook runs for every tool (and every session start). */
export const groupedLayout: HookLayout = {
  handlers: (list) =>
    list.flatMap((group) =>
      isJsonObject(group) && Array.isArray(group.hooks) ? group.hooks.filter(isJsonObject) : [],
    ),
  entry: (handler) => ({ hooks: [handler] }),
  command: (line, timeout) => ({ type: 'command', command: line, timeout }),
};

/** Cursor's `{ "version": 1, "hooks": { "<event>": [{ "command" }] } }`. */
export const flatLayout: HookLayout = {
  handlers: (list) => list.filter(isJsonObject),
  entry: (handler) => handler,
  // Cursor gives every hook its own default time.
  command: (line) => ({ command: line }),
  prepare: (doc) => {
    doc.version ??= 1;
  },
};

/**
 * GitHub Copilot CLI's `{ "version": 1, "hooks": { "<event>": [{ "type": "command", "bash", "timeoutSec" }] } }`;
 * a program runs as `exec` and `args`, with no shell, on every platform.
 */
export const copilotLayout: HookLayout = {
  handlers: flatLayout.handlers,
  entry: flatLayout.entry,
  command: (line, timeoutSec) => ({ type: 'command', bash: line, timeoutSec }),
  program: (exec, args, timeoutSec) => ({ type: 'command', exec, args, timeoutSec }),
  prepare: flatLayout.prepare!,
};

const invalid = (problem: string): ChangeResult => ({
  kind: 'invalid',
  problem,
  fix: 'Correct it by hand (the agent would not read it either), then run this again.',
});

/** The fields that say where a handler goes; a user's own `timeout` or `statusMessage` is kept. */
const TARGET_FIELDS = [
  'type',
  'command',
  'bash',
  'exec',
  'args',
  'matcher',
  'url',
  'headers',
  'allowedEnvVars',
] as const;

const sameTarget = (a: JsonObject, b: JsonObject) =>
  TARGET_FIELDS.every((field) => JSON.stringify(a[field]) === JSON.stringify(b[field]));

/** Makes an existing handler ours, in place: the target fields of `wanted`, the user's other keys kept. */
const retarget = (handler: JsonObject, wanted: JsonObject) => {
  for (const field of TARGET_FIELDS) delete handler[field];
  const timeouts = { timeout: handler.timeout, timeoutSec: handler.timeoutSec };
  Object.assign(
    handler,
    wanted,
    Object.fromEntries(Object.entries(timeouts).filter(([, value]) => value !== undefined)),
  );
};

/**
 * Adds each hook to `hooks.<event>` unless a handler already goes where it goes, keeping every
 * other hook. A pulse hook reaching the same daemon in another way (an older setup, another
 * transport) is brought up to date in place; one reaching another port, project or clone is a
 * conflict, replaced in place with `force`.
 */
export const hooksChange =
  (agent: HookAgent, layout: HookLayout, specs: HookSpec[], target: HookTarget): JsonChange =>
  (doc, { force, forceCommand }) => {
    const hooks = doc.hooks ?? {};
    if (!isJsonObject(hooks)) return invalid('has a "hooks" that is not an object');
    const stale: Array<{ handler: JsonObject; wanted: JsonObject }> = [];
    const outdated: Array<{ handler: JsonObject; wanted: JsonObject }> = [];
    const missing: HookSpec[] = [];
    for (const spec of specs) {
      const list = hooks[spec.event] ?? [];
      if (!Array.isArray(list)) return invalid(`has a "hooks.${spec.event}" that is not a list`);
      const handlers = layout.handlers(list);
      if (handlers.some((handler) => sameTarget(handler, spec.handler))) continue;
      const old = handlers
        .map((handler) => ({ handler, found: findPulseHook(agent, spec.event, handler) }))
        .find(({ found }) => found !== null);
      if (old === undefined) missing.push(spec);
      else
        (reachesTarget(old.found!, target) ? outdated : stale).push({
          handler: old.handler,
          wanted: spec.handler,
        });
    }
    if (stale.length > 0 && !force) {
      const { command, bash, exec, url } = stale[0]!.handler;
      const shown = command ?? bash ?? exec ?? url;
      return {
        kind: 'conflict',
        problem: `has pulse hooks that reach another pulse, port or project (${String(shown)}); left as they are`,
        fix: `\`${forceCommand}\` points them at this one (after a backup).`,
      };
    }
    if (stale.length === 0 && outdated.length === 0 && missing.length === 0) return { kind: 'unchanged' };
    layout.prepare?.(doc);
    doc.hooks = hooks;
    for (const { handler, wanted } of [...outdated, ...stale]) retarget(handler, wanted);
    for (const spec of missing) {
      const list = (hooks[spec.event] ?? []) as unknown[];
      list.push(layout.entry(spec.handler));
      hooks[spec.event] = list;
    }
    return stale.length > 0
      ? { kind: 'changed', replaced: `${stale.length} pulse hook(s) reaching another pulse, port or project` }
      : { kind: 'changed' };
  };
