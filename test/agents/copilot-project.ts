import { execFileSync } from 'node:child_process';
import { readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type RunningDaemon, runCli, startDaemon, tempProject } from '../support/daemon.js';
import type { trackStarted } from '../support/started.js';
import { type ScriptedChatModel, type Step, startScriptedChatModel } from './chat-model.js';
import { type CopilotHome, type CopilotRun, makeCopilotHome, runCopilot } from './copilot.js';
import { freePort } from './pulse-project.js';

// The scene of each Copilot test: a git project set up by `pulse setup copilot --write` beside a
// real `pulse start`, and one `copilot -p` run in it on a scripted model, in a HOME whose
// ~/.copilot/config.json trusts the project: what Copilot writes when the user answers "Yes, and
// remember this folder for future sessions" (pulse never writes it).

type Started = ReturnType<typeof trackStarted>;

/** A project set up for Copilot, and the daemon its hooks and MCP entry point at. */
export interface CopilotProject {
  project: string;
  port: number;
  daemon: RunningDaemon;
}

/** `pulse setup <agent> --write` on the project for the daemon's port, which must succeed; what it printed. */
export const setUp = async (agent: string, project: string, port: number): Promise<string> => {
  const setup = await runCli(['setup', agent, '--write', '-p', project, '--port', String(port)]);
  if (setup.code !== 0) throw new Error(`pulse setup ${agent} failed:\n${setup.stdout}\n${setup.stderr}`);
  return setup.stdout;
};

/**
 * A fresh git repository with a README and `pulse start` on it (on a fixed port), set up by the
 * built `pulse setup copilot --write`; `prepare` runs on the folder before the daemon starts.
 */
export const pulseProjectForCopilot = async (
  started: Started,
  prepare: (project: string) => Promise<void> = async () => {},
): Promise<CopilotProject> => {
  const project = await realpath(await tempProject('pulse-copilot-'));
  started.projects.push(project);
  execFileSync('git', ['init', '-q', project]);
  await writeFile(join(project, 'README.md'), 'hello world\n');
  await prepare(project);
  const port = await freePort();
  // startDaemon passes `--port 0`; a second `--port` wins.
  const daemon = await startDaemon(project, { args: ['--port', String(port)] });
  started.daemons.push(daemon);
  await setUp('copilot', project, port);
  return { project, port, daemon };
};

/** One `copilot -p` run on a script, and what the model was sent. */
export interface ScriptedRun {
  run: CopilotRun;
  model: ScriptedChatModel;
  /** Enough of the run to tell why an assertion failed. */
  context: string;
}

/**
 * Runs `copilot -p <prompt>` in `project` on `steps` (every model request is a step: a subagent's
 * too), with `args` as the user's own permission flags, in `home` or a temp HOME trusting the
 * project unless `trusted` is false.
 */
export const copilotScripted = async (
  started: Started,
  project: string,
  steps: Step[],
  {
    prompt = 'Carry on with the task.',
    args = [] as string[],
    trusted = true,
    home: given,
  }: { prompt?: string; args?: string[]; trusted?: boolean; home?: CopilotHome } = {},
): Promise<ScriptedRun> => {
  const model = await startScriptedChatModel(steps, { isTurn: () => true });
  started.streams.push({ close: () => void model.close() });
  const home = given ?? (await makeCopilotHome(trusted ? [project] : []));
  started.projects.push(home.home);
  const run = await runCopilot({ cwd: project, home, baseUrl: model.baseUrl, prompt, args });
  const context = `copilot exited ${run.code} after ${model.turns().length} model requests\n${run.stderr}`;
  return { run, model, context };
};

/** The shell line of pulse's own hook for `event` in `.github/hooks/pulse.json`. */
export const pulseHookLine = async (project: string, event: string): Promise<string> => {
  const file = JSON.parse(await readFile(join(project, '.github', 'hooks', 'pulse.json'), 'utf8')) as {
    hooks: Record<string, Array<{ bash: string }>>;
  };
  return file.hooks[event]![0]!.bash;
};
