import { fileURLToPath } from 'node:url';
import type { HookAgent } from '../hooks/events.js';

/** Where the hook command finds node and this clone's CLI; absolute, since pulse is not installed globally. */
export interface HookRuntime {
  nodePath: string;
  cliPath: string;
}

/** The node running this and the CLI next to this module (`dist/src/cli.js` once built). */
export const currentRuntime = (): HookRuntime => ({
  nodePath: process.execPath,
  cliPath: fileURLToPath(new URL('../cli.js', import.meta.url)),
});

/** A path in double quotes for a POSIX shell; on Windows paths hold no `"` and backslashes are separators. */
export const shellQuote = (path: string, platform = process.platform): string =>
  platform === 'win32' ? `"${path}"` : `"${path.replace(/["\\$`]/g, '\\$&')}"`;

/** The end every pulse hook command has, whichever node and clone it names. */
export const hookCommandSuffix = (agent: HookAgent, event: string): string =>
  ` hook ${agent} --event ${event}`;

/** The command an agent runs for one hook event: `"<node>" "<cli.js>" hook <agent> --event <event>`. */
export const hookCommand = (agent: HookAgent, event: string, runtime: HookRuntime): string =>
  `${shellQuote(runtime.nodePath)} ${shellQuote(runtime.cliPath)}${hookCommandSuffix(agent, event)}`;
