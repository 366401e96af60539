import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { startReadyChild } from './child-process.js';

/** The built CLI, as `npm run bench` leaves it beside this file in dist/. */
export const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));

/** Longest wait for `MCP endpoint:`; past it the daemon is reported as not starting. */
const START_LIMIT_MS = 60_000;

/** A `pulse start` child process serving one project. */
export interface BenchDaemon {
  pid: number;
  url: string;
  /** Milliseconds from spawn() to the `MCP endpoint:` line on stdout. */
  endpointMs: number;
  /** performance.now() at spawn, to time later milestones from the same origin. */
  spawnedAt: number;
  /** Its stdout, for what it prints after the endpoint line. */
  stdout: Readable;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts the real daemon as a user does (`pulse start --port 0`) and resolves once it prints
 * its endpoint. `nodeArgs` go to node itself (e.g. `--cpu-prof`), `startArgs` to `pulse start`.
 */
export const startDaemon = async (
  project: string,
  { nodeArgs = [], startArgs = [] }: { nodeArgs?: string[]; startArgs?: string[] } = {},
): Promise<BenchDaemon> => {
  const child = await startReadyChild(
    `pulse start on ${project}`,
    [...nodeArgs, CLI, 'start', '--project', project, '--port', '0', ...startArgs],
    { ready: /MCP endpoint: (\S+)/, limitMs: START_LIMIT_MS },
  );
  return {
    pid: child.pid,
    url: child.announced,
    endpointMs: child.readyAt - child.spawnedAt,
    spawnedAt: child.spawnedAt,
    stdout: child.stdout,
    stop: child.stop,
  };
};
