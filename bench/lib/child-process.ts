import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

/** How much of a child's output to keep for an error message. */
const KEEP_OUTPUT = 4_000;

/** A child process that announced it was ready with a line on stdout. */
export interface ReadyChild {
  pid: number;
  /** The ready pattern's first group (a URL). */
  announced: string;
  /** performance.now() at spawn and when the ready line arrived. */
  spawnedAt: number;
  readyAt: number;
  /** Its stdout, for what it prints after the ready line. */
  stdout: Readable;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** SIGKILLs every child still running; synchronous, so it also works in an `exit` handler. */
export const killAllChildren = (): void => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
};

/**
 * Spawns `node args…` (or `program args…`) and resolves once stdout matches `ready`; rejects
 * (killing the child) if it exits first or says nothing within `limitMs`, with what it printed.
 */
export const startReadyChild = (
  name: string,
  args: string[],
  {
    ready,
    limitMs,
    program = process.execPath,
    env,
  }: { ready: RegExp; limitMs: number; program?: string; env?: Record<string, string> },
): Promise<ReadyChild> =>
  new Promise((resolve, reject) => {
    const spawnedAt = performance.now();
    const child = spawn(program, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(env === undefined ? {} : { env: { ...process.env, ...env } }),
    });
    running.add(child);
    let isReady = false;
    let output = '';
    const keep = (data: unknown) => {
      output = `${output}${data}`.slice(-KEEP_OUTPUT);
    };
    const fail = (why: string) => {
      child.kill('SIGKILL');
      reject(new Error(`${name} ${why}:\n${output}`));
    };
    const timer = setTimeout(() => fail(`was not ready within ${limitMs} ms`), limitMs);
    const exited = new Promise<void>((done) =>
      child.once('exit', (code, signal) => {
        running.delete(child);
        clearTimeout(timer);
        if (!isReady) fail(`exited (${code ?? signal}) before it was ready`);
        done();
      }),
    );
    child.once('error', (error) => fail(`could not start: ${error.message}`));
    child.stderr.on('data', keep);
    child.stdout.on('data', (data) => {
      if (isReady) return;
      const readyAt = performance.now();
      keep(data);
      const match = ready.exec(output);
      if (!match) return;
      isReady = true;
      clearTimeout(timer);
      resolve({
        pid: child.pid!,
        announced: match[1]!,
        spawnedAt,
        readyAt,
        stdout: child.stdout,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
