import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HookAgent } from '../hooks/events.js';
import { setupDialectOf } from './agents.js';
import { type FoundPulseHook, findPulseHook } from './hook-handlers.js';
import { isJsonObject, parseJsonObject } from './json-edit.js';

/** A pulse hook standing in an agent's hooks file, under the event it is registered for. */
export type InstalledHook = FoundPulseHook & { event: string };

/**
 * Every pulse hook in the agent's hooks file of `project` (JSONC), or its plugin (one for all its
 * events, `*`); none when the file is missing or unreadable.
 */
export const installedHooks = async (agent: HookAgent, project: string): Promise<InstalledHook[]> => {
  const place = setupDialectOf(agent).hooks;
  if (place === undefined) return [];
  const text = await readFile(join(project, place.file), 'utf8').catch(() => '');
  if (!('layout' in place)) {
    const plugin = place.installed(text);
    return plugin === null ? [] : [{ ...plugin, event: '*' }];
  }
  const parsed = parseJsonObject(text);
  const hooks = 'doc' in parsed && isJsonObject(parsed.doc.hooks) ? parsed.doc.hooks : {};
  return Object.entries(hooks).flatMap(([event, list]) =>
    Array.isArray(list)
      ? place.layout.handlers(list).flatMap((handler) => {
          const found = findPulseHook(agent, event, handler);
          return found === null ? [] : [{ ...found, event }];
        })
      : [],
  );
};
