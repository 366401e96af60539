import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PulsePaths } from '../store/paths.js';
import { ensureProjectFolder } from '../store/pulse-folder.js';

/** Set in the daemon `pulse start --detach` starts, which reports to it over IPC instead of a terminal. */
export const DETACHED_ENV = 'PULSE_DETACHED';

/** What the detached daemon tells the `pulse start --detach` that started it. */
export type DetachedReport =
  | { kind: 'ready'; url: string; summary: string[] }
  | { kind: 'failed'; message: string };

/** A daemon running in the background, as `pulse start --detach` left it. */
export interface DetachedDaemon {
  pid: number;
  url: string;
  /** The start summary, with the project folder it created, if any. */
  summary: string[];
  /** Where Node itself writes if the daemon crashes (its log is `.pulse/pulse.log`). */
  stderrFile: string | null;
}

/** Past this a detached start counts as failed (a hung start is killed). */
const START_LIMIT_MS = 30_000;

export const STDERR_FILE = 'pulse-stderr.log';

/** Whether this process is a daemon started by `pulse start --detach`. */
export const isDetachedChild = (): boolean => process.env[DETACHED_ENV] === '1' && process.send !== undefined;

/** Sends the parent one report and waits until it is out (an exit right after would drop it). */
export const tellParent = (report: DetachedReport): Promise<void> =>
  new Promise((resolve) => {
    if (process.send === undefined) return resolve();
    process.send(report, undefined, {}, () => resolve());
  });

/**
 * Opens `.pulse/pulse-stderr.log` for the daemon's stdout and stderr (the JSON log goes to
 * `pulse.log` as ever): what is left there is what Node itself printed, such as a crash. None
 * when `.pulse/` is not a real folder: the daemon then refuses to start, and says why over IPC.
 */
const openStderrFile = async (paths: PulsePaths): Promise<{ fd: number | 'ignore'; file: string | null }> => {
  const existing = await lstat(paths.dir).catch(() => null);
  if (existing !== null && !existing.isDirectory()) return { fd: 'ignore', file: null };
  await mkdir(paths.dir, { recursive: true });
  const file = join(paths.dir, STDERR_FILE);
  return { fd: openSync(file, 'w'), file };
};

/**
 * `pulse start`'s arguments without `--token` and its value: any account on this machine can read
 * a process's argv (`ps`, /proc/<pid>/cmdline), so the token goes to the child in its environment.
 */
export const withoutToken = (args: readonly string[]): string[] => {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      kept.push(...args.slice(i));
      break;
    }
    if (arg === '--token') i++;
    else if (!arg.startsWith('--token=')) kept.push(arg);
  }
  return kept;
};

/** Any HTTP answer from the daemon counts (a 503 from /healthz names problems, but it serves). */
const answers = async (url: string): Promise<boolean> => {
  try {
    await fetch(new URL('healthz', url), { signal: AbortSignal.timeout(5_000) });
    return true;
  } catch {
    return false;
  }
};

/**
 * `pulse start --detach`: starts `pulse start` with the same arguments as a process of its own
 * (a new session, no terminal), waits until it serves and its endpoint answers, then leaves it
 * running. Throws with the daemon's own reason when it does not start.
 */
export const startDetached = async ({
  paths,
  args,
  token,
  script = process.argv[1]!,
}: {
  paths: PulsePaths;
  /** `pulse start`'s arguments, without `--detach`; a `--token` among them is taken out. */
  args: string[];
  /** The token the daemon requires, handed over as PULSE_TOKEN, never in its argv. */
  token?: string | undefined;
  script?: string;
}): Promise<DetachedDaemon> => {
  const createdProject = await ensureProjectFolder(paths.projectRoot);
  const output = await openStderrFile(paths);
  const child = spawn(process.execPath, [...process.execArgv, script, 'start', ...withoutToken(args)], {
    detached: true,
    stdio: ['ignore', output.fd, output.fd, 'ipc'],
    env: { ...process.env, [DETACHED_ENV]: '1', ...(token ? { PULSE_TOKEN: token } : {}) },
  });
  if (typeof output.fd === 'number') closeSync(output.fd);
  const crashed = output.file === null ? '' : `; see ${output.file}`;
  const report = await new Promise<DetachedReport>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve({ kind: 'failed', message: `pulse did not serve within ${START_LIMIT_MS / 1000} s${crashed}` });
    }, START_LIMIT_MS);
    const settle = (value: DetachedReport) => {
      clearTimeout(timer);
      resolve(value);
    };
    child.once('message', (message) => settle(message as DetachedReport));
    child.once('error', (error) => settle({ kind: 'failed', message: error.message }));
    child.once('exit', (code, signal) =>
      settle({ kind: 'failed', message: `pulse exited (${code ?? signal}) before it served${crashed}` }),
    );
  });
  if (report.kind === 'failed') throw new Error(report.message);
  if (!(await answers(report.url))) {
    child.kill('SIGTERM');
    throw new Error(`pulse said it serves ${report.url}, but nothing answers there${crashed}`);
  }
  child.disconnect();
  child.unref();
  return {
    pid: child.pid!,
    url: report.url,
    summary: [
      ...(createdProject ? [`Created the project folder ${paths.projectRoot}`] : []),
      ...report.summary,
    ],
    stderrFile: output.file,
  };
};
