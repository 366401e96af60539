import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { trackStarted } from '../support/started.js';
import { type ScriptedChatModel, type Step, startScriptedChatModel } from './chat-model.js';
import { type CopilotHome, type CopilotRun, makeCopilotHome, runCopilot } from './copilot.js';
import { type PulseProject, pulseProjectFor } from './pulse-project.js';

// The scene of each Copilot test: a git project set up by `pulse setup copilot --write` beside a
// real `pulse start`, and one `copilot -p` run in it on a scripted model, in a HOME whose
// ~/.copilot/config.json trusts the project: what Copilot writes when the user answers "Yes, and
// remember this folder for future sessions" (pulse never writes it).

type Started = ReturnType<typeof trackStarted>;

/**
 * A fresh git repository with a README and `pulse start` on it (on a fixed port), set up by the
 * built `pulse setup copilot --write`; `prepare` runs on the folder before the daemon starts.
 */
export const pulseProjectForCopilot = (
  started: Started,
  prepare: (project: string) => Promise<void> = async () => {},
): Promise<PulseProject> =>
  pulseProjectFor(started, 'copilot', {
    prepare: async (project) => {
      await writeFile(join(project, 'README.md'), 'hello world\n');
      await prepare(project);
    },
  });

/** One `copilot -p` run on a script, and what the model was sent. */
export interface ScriptedRun {
  run: CopilotRun;
  model: ScriptedChatModel;
  /** Enough of the run to tell why an assertion failed. */
  context: string;
}

/**
 * Runs `copilot -p <prompt>` in `project` on `steps` (every model request is a step: a subagent's
 * too), with `args` as the user's own permission flags and `env` added to its environment, in
 * `home` or a temp HOME trusting the project unless `trusted` is false.
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
    env = {},
  }: {
    prompt?: string;
    args?: string[];
    trusted?: boolean;
    home?: CopilotHome;
    env?: Record<string, string>;
  } = {},
): Promise<ScriptedRun> => {
  const model = await startScriptedChatModel(steps, { isTurn: () => true });
  started.streams.push({ close: () => void model.close() });
  const home = given ?? (await makeCopilotHome(trusted ? [project] : []));
  started.projects.push(home.home);
  const run = await runCopilot({ cwd: project, home, baseUrl: model.baseUrl, prompt, args, env });
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
