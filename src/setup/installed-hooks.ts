import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HookAgent } from '../hooks/events.js';
import type { SetupAgent } from './agent-names.js';
import { agentSetup } from './agents.js';
import { flatLayout, groupedLayout } from './hook-entries.js';
import { currentRuntime, type FoundPulseHook, findPulseHook } from './hook-handlers.js';
import { isJsonObject, parseJsonObject } from './json-edit.js';

/** A pulse hook standing in an agent's hooks file, under the event it is registered for. */
export type InstalledHook = FoundPulseHook & { event: string };

/** The project file an agent reads its hooks from, or null for an agent without hooks (VS Code). */
export const hooksFileOf = (agent: SetupAgent): string | null => {
  const target = {
    url: '',
    port: 0,
    project: '',
    runtime: currentRuntime(),
    transport: 'node' as const,
    pulse: '',
    autostart: false,
  };
  return agentSetup(agent, target).parts.find((part) => part.part === 'hooks')?.file ?? null;
};

/** Every pulse hook in the agent's hooks file of `project` (JSONC); none when the file is missing or unreadable. */
export const installedHooks = async (agent: HookAgent, project: string): Promise<InstalledHook[]> => {
  const file = hooksFileOf(agent);
  if (file === null) return [];
  const text = await readFile(join(project, file), 'utf8').catch(() => '');
  const parsed = parseJsonObject(text);
  const hooks = 'doc' in parsed && isJsonObject(parsed.doc.hooks) ? parsed.doc.hooks : {};
  const layout = agent === 'cursor' ? flatLayout : groupedLayout;
  return Object.entries(hooks).flatMap(([event, list]) =>
    Array.isArray(list)
      ? layout.handlers(list).flatMap((handler) => {
          const found = findPulseHook(agent, event, handler);
          return found === null ? [] : [{ ...found, event }];
        })
      : [],
  );
};
