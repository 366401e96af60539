import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HookAgent } from '../hooks/events.js';

/** Where the hook command finds node and this clone's CLI; absolute, since pulse is not installed globally. */
export interface HookRuntime {
  nodePath: string;
  cliPath: string;
}

/**
 * The node running this and the `pulse` bin next to this module (`dist/src/bin.cjs` once built):
 * the CommonJS entry, which starts a hook faster than `cli.js`.
 */
export const currentRuntime = (): HookRuntime => ({
  nodePath: process.execPath,
  cliPath: fileURLToPath(new URL('../bin.cjs', import.meta.url)),
});

/** A path in double quotes for a POSIX shell; on Windows paths hold no `"` and backslashes are separators. */
export const shellQuote = (path: string, platform = process.platform): string =>
  platform === 'win32' ? `"${path}"` : `"${path.replace(/["\\$`]/g, '\\$&')}"`;

/** The end every pulse hook command has, whichever node and clone it names. */
export const hookCommandSuffix = (agent: HookAgent, event: string): string =>
  ` hook ${agent} --event ${event}`;

/** The command an agent runs for one hook event: `"<node>" "<bin.cjs>" hook <agent> --event <event>`. */
export const hookCommand = (agent: HookAgent, event: string, runtime: HookRuntime): string =>
  `${shellQuote(runtime.nodePath)} ${shellQuote(runtime.cliPath)}${hookCommandSuffix(agent, event)}`;

/** What an older pulse setup wrote for the same node and clone: it named `cli.js`, which still answers. */
export const olderHookCommand = (agent: HookAgent, event: string, runtime: HookRuntime): string =>
  hookCommand(agent, event, { ...runtime, cliPath: join(dirname(runtime.cliPath), 'cli.js') });
