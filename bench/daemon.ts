import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** SIGKILLs every daemon still running; synchronous, so it also works in an `exit` handler. */
export const killAllDaemons = (): void => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
};

/**
 * Starts the real daemon as a user does (`pulse start --port 0`) and resolves once it prints
 * its endpoint. `nodeArgs` go to node itself (e.g. `--cpu-prof`).
 */
export const startDaemon = (
  project: string,
  { nodeArgs = [] }: { nodeArgs?: string[] } = {},
): Promise<BenchDaemon> =>
  new Promise((resolve, reject) => {
    const spawnedAt = performance.now();
    const child = spawn(process.execPath, [...nodeArgs, CLI, 'start', '--project', project, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    let served = false;
    let output = '';
    const fail = (why: string) => {
      child.kill('SIGKILL');
      reject(new Error(`pulse start on ${project} ${why}:\n${output}`));
    };
    const timer = setTimeout(() => fail(`printed no endpoint within ${START_LIMIT_MS} ms`), START_LIMIT_MS);
    const exited = new Promise<void>((done) =>
      child.once('exit', (code, signal) => {
        running.delete(child);
        clearTimeout(timer);
        if (!served) fail(`exited (${code ?? signal}) before serving`);
        done();
      }),
    );
    child.stderr.on('data', (data) => {
      output += data;
    });
    child.stdout.on('data', (data) => {
      if (served) return;
      const at = performance.now();
      output += data;
      const match = /MCP endpoint: (\S+)/.exec(output);
      if (!match) return;
      served = true;
      clearTimeout(timer);
      resolve({
        pid: child.pid!,
        url: match[1]!,
        endpointMs: at - spawnedAt,
        spawnedAt,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
