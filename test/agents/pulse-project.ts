import { execFileSync } from 'node:child_process';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { type RunningDaemon, runCli, startDaemon, tempProject } from '../support/daemon.js';
import type { trackStarted } from '../support/started.js';

/** A free loopback port: `pulse setup` writes the port into the agent's files before the daemon starts. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** Writes `value` as JSON at `file` inside `project`, creating its folder. */
export const writeJson = async (project: string, file: string, value: unknown) => {
  await mkdir(dirname(join(project, file)), { recursive: true });
  await writeFile(join(project, file), `${JSON.stringify(value, null, 2)}\n`);
};

/** Reads a JSON file of the project. */
export const readJson = async (project: string, file: string): Promise<Record<string, unknown>> =>
  JSON.parse(await readFile(join(project, file), 'utf8'));

/**
 * A temp project that is a git repository of its own, as most are. Claude Code takes the nearest
 * `.git` above the working folder as the project: without one here, a stray `/tmp/.git` (another
 * tool made one on our machines) makes `/tmp` the project, and trust and settings go by that.
 */
export const tempGitProject = async (
  started: ReturnType<typeof trackStarted>,
  prefix = 'pulse-claude-',
): Promise<string> => {
  const project = await tempProject(prefix);
  started.projects.push(project);
  execFileSync('git', ['init', '-q'], { cwd: project });
  return project;
};

/** A project as a user leaves it after `pulse start` and `pulse setup <agent> --write`. */
export interface PulseProject {
  project: string;
  port: number;
  daemon: RunningDaemon;
  /** What `pulse setup` printed. */
  setupOutput: string;
}

/** `pulse setup <agent> --write` on the project for the daemon's port, which must succeed; what it printed. */
export const setUpAgent = async (agent: string, project: string, port: number, ...args: string[]) => {
  const setup = await runCli(['setup', agent, '--write', '-p', project, '--port', String(port), ...args]);
  if (setup.code !== 0) throw new Error(`pulse setup ${agent} failed:\n${setup.stdout}\n${setup.stderr}`);
  return setup.stdout;
};

/**
 * A fresh git project (by its real path) with a running daemon on a fixed port, set up for `agent`
 * by the built CLI exactly as the README says; everything is handed to `started` for teardown.
 * `prepare` runs on the folder before the daemon starts (a `.pulse/sources.json`, a README).
 */
export const pulseProjectFor = async (
  started: ReturnType<typeof trackStarted>,
  agent: string,
  {
    prefix = `pulse-${agent}-`,
    prepare = async () => {},
    daemonEnv = {},
  }: {
    prefix?: string;
    prepare?: (project: string) => Promise<unknown>;
    /** Added to the daemon's environment (a `PULSE_TOKEN` it then requires). */
    daemonEnv?: Record<string, string>;
  } = {},
): Promise<PulseProject> => {
  const project = await realpath(await tempGitProject(started, prefix));
  await prepare(project);
  const port = await freePort();
  // startDaemon passes `--port 0`; a second `--port` wins.
  const daemon = await startDaemon(project, { args: ['--port', String(port)], env: daemonEnv });
  started.daemons.push(daemon);
  return { project, port, daemon, setupOutput: await setUpAgent(agent, project, port) };
};

/** A project set up for Claude Code; `prepare` runs on the folder before the daemon starts. */
export const pulseProjectForClaude = (
  started: ReturnType<typeof trackStarted>,
  prepare: (project: string) => Promise<void> = async () => {},
): Promise<PulseProject> => pulseProjectFor(started, 'claude', { prepare });

const LOCAL_SETTINGS = '.claude/settings.local.json';

/**
 * Adds a hook of the user's own after pulse's for `event` in `.claude/settings.local.json` (pulse's
 * stays first): an HTTP hook to `url` that a test's hook server records and answers with nothing,
 * to see what Claude Code gives hooks beside pulse's (`stop_hook_active`, `prompt_id`).
 */
export const addUserHook = async (project: string, event: string, url: string) => {
  const settings = await readJson(project, LOCAL_SETTINGS);
  const hooks = settings.hooks as Record<string, Array<{ hooks: unknown[] }>>;
  hooks[event]!.push({ hooks: [{ type: 'http', url, timeout: 3 }] });
  await writeJson(project, LOCAL_SETTINGS, settings);
};
