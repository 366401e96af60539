import { spawn } from 'node:child_process';
import { CLI, waitUntil } from './daemon.js';
import type { trackStarted } from './started.js';

/**
 * `pulse …` as a child process whose output can be awaited while it runs (as a user watches
 * `pulse guide --wait` in another terminal); handed to `started` to be killed after.
 */
export const pulseRunning = (
  started: ReturnType<typeof trackStarted>,
  args: string[],
  env: Record<string, string> = {},
) => {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data) => {
    stdout += data;
  });
  child.stderr.on('data', (data) => {
    stderr += data;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => stdout,
    errors: () => stderr,
    exited,
    printed: (pattern: RegExp, timeoutMs = 15_000) =>
      waitUntil(() => pattern.test(stdout), {
        timeoutMs,
        describe: () => `${pattern} in:\n${stdout}${stderr}`,
      }),
  };
};
