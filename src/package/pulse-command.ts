import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';
import { findProgram } from '../os/find-program.js';

/**
 * Places npm, npx and pnpm may clean on their own: a hook that runs pulse from there stops
 * enforcing the day it is cleaned, without a word.
 */
export const inPackageCache = (path: string): boolean =>
  path.includes(`${sep}_npx${sep}`) ||
  path.startsWith(join(homedir(), '.npm') + sep) ||
  /[\\/](?:dlx-[^\\/]+|\.pnpm-store|pnpm[\\/]dlx)[\\/]/.test(path);

/** The entries pulse is started by: the bundle's bin and module, tsc's bin and CLI. */
const ENTRY = /^(.*)[\\/]dist[\\/](?:bundle[\\/](?:bin\.cjs|pulse\.mjs)|src[\\/](?:bin\.cjs|cli\.js))$/;

/** The pulse install a bin or CLI path belongs to: the folder holding its `dist/`. */
export const installOf = (path: string): string => ENTRY.exec(path)?.[1] ?? path;

const real = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/** A path as one shell word: quoted only when it must be. */
export const shellWord = (text: string): string =>
  /^[\w@%+=:,./-]+$/.test(text) ? text : `"${text.replace(/["\\$`]/g, '\\$&')}"`;

export interface CommandContext {
  env?: NodeJS.ProcessEnv;
  /** The script node was started with (`process.argv[1]`). */
  script?: string;
  /**
   * The hint is read somewhere else later (an agent's hook message, a file): no `npm run`, which
   * works only inside the clone.
   */
  anywhere?: boolean;
}

/**
 * The command that runs this pulse the way it was installed, for every hint pulse prints:
 * `pulse` when the `pulse` on PATH is this install (npm install -g, npm link), `npx pulse-agent`
 * from npx's cache, `npm run pulse --` under the clone's own npm scripts, else node and the
 * script's path; `pulse` in a process that is not pulse's own (a test runner).
 */
export const pulseCommand = ({
  env = process.env,
  script = process.argv[1] ?? '',
  anywhere = false,
}: CommandContext = {}): string => {
  const entry = real(script);
  // Not started as pulse (a test runner, a program that imports it): the installed name is the best guess.
  if (!ENTRY.test(entry)) return 'pulse';
  const install = installOf(entry);
  if (inPackageCache(install)) return 'npx pulse-agent';
  const onPath = findProgram('pulse', env.PATH ?? '');
  if (onPath !== null && installOf(real(onPath)) === install) return 'pulse';
  if (!anywhere && env.npm_package_name === 'pulse-agent' && env.npm_lifecycle_event !== undefined)
    return 'npm run pulse --';
  return `node ${shellWord(script)}`;
};

/** `<pulse command> <args>`, as the user can run it here (or, with `anywhere`, from any folder). */
export const pulse = (args: string, context?: CommandContext): string => `${pulseCommand(context)} ${args}`;
