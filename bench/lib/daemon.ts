import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { startReadyChild } from './child-process.js';

/** The bundled `pulse` bin, as the package ships it, which `npm run bench` builds beside this file in dist/. */
export const CLI = fileURLToPath(new URL('../../bundle/bin.cjs', import.meta.url));

/** tsc's output before bundling: the same code as one module a file, for side-by-side start-ups. */
export const UNBUNDLED_CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));

/** How to run a pulse: the program and the arguments before `start` (node and a script, or an installed bin). */
export interface PulseCommand {
  program: string;
  args: string[];
}

export const BUNDLED: PulseCommand = { program: process.execPath, args: [CLI] };

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
  {
    nodeArgs = [],
    startArgs = [],
    command = BUNDLED,
    env,
  }: { nodeArgs?: string[]; startArgs?: string[]; command?: PulseCommand; env?: Record<string, string> } = {},
): Promise<BenchDaemon> => {
  const child = await startReadyChild(
    `pulse start on ${project}`,
    [...nodeArgs, ...command.args, 'start', '--project', project, '--port', '0', ...startArgs],
    {
      ready: /MCP endpoint: (\S+)/,
      limitMs: START_LIMIT_MS,
      program: command.program,
      ...(env === undefined ? {} : { env }),
    },
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
