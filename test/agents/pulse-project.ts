import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
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
export const tempGitProject = async (started: ReturnType<typeof trackStarted>): Promise<string> => {
  const project = await tempProject('pulse-claude-');
  started.projects.push(project);
  execFileSync('git', ['init', '-q'], { cwd: project });
  return project;
};

/** A project as a user leaves it after `pulse start` and `pulse setup claude --write`. */
export interface PulseProject {
  project: string;
  port: number;
  daemon: RunningDaemon;
  /** What `pulse setup` printed. */
  setupOutput: string;
}

/**
 * A temp project with a running daemon on a fixed port, set up for Claude Code by the built CLI,
 * exactly as the README says; everything is handed to `started` for teardown. `prepare` runs on the
 * folder before the daemon starts (a `.pulse/sources.json`, a README).
 */
export const pulseProjectForClaude = async (
  started: ReturnType<typeof trackStarted>,
  prepare: (project: string) => Promise<void> = async () => {},
): Promise<PulseProject> => {
  const project = await tempGitProject(started);
  await prepare(project);
  const port = await freePort();
  // startDaemon passes `--port 0`; a second `--port` wins.
  const daemon = await startDaemon(project, { args: ['--port', String(port)] });
  started.daemons.push(daemon);
  const setup = await runCli(['setup', 'claude', '--write', '-p', project, '--port', String(port)]);
  if (setup.code !== 0) throw new Error(`pulse setup claude failed:\n${setup.stdout}\n${setup.stderr}`);
  return { project, port, daemon, setupOutput: setup.stdout };
};

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
