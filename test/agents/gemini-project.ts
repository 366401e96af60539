import { join } from 'node:path';
import { readJsonLines } from '../support/files.js';
import type { trackStarted } from '../support/started.js';
import { type GeminiHome, type GeminiOptions, type GeminiRun, makeGeminiHome, runGemini } from './gemini.js';
import { type ScriptedGemini, type Step, startScriptedGemini } from './gemini-model.js';
import { type PulseProject, pulseProjectFor, readJson, setUpAgent, writeJson } from './pulse-project.js';

// The scene of each Gemini test: a git project set up by `pulse setup gemini --write` beside a real
// `pulse start`, a temp HOME whose `~/.gemini/trustedFolders.json` trusts the project (the user's
// one step, as Gemini's "Trust folder" dialog writes it), and `gemini -p` runs on a scripted model.

type Started = ReturnType<typeof trackStarted>;

export const SETTINGS = '.gemini/settings.json';

/** A project set up for Gemini CLI, its daemon, and the user's Gemini home. */
export interface GeminiProject extends PulseProject {
  home: GeminiHome;
}

/** `pulse setup gemini --write` for the project and port, which must succeed; what it printed. */
export const setUpGemini = (project: string, port: number, ...args: string[]): Promise<string> =>
  setUpAgent('gemini', project, port, ...args);

/**
 * A fresh git project with `pulse start` on a fixed port and `pulse setup gemini --write` done, and
 * a Gemini home that trusts it; `prepare` runs on the folder before the daemon starts.
 */
export const pulseProjectForGemini = async (
  started: Started,
  prepare: (project: string) => Promise<void> = async () => {},
): Promise<GeminiProject> => {
  const scene = await pulseProjectFor(started, 'gemini', { prepare });
  return { ...scene, home: await trustingHome(started, scene.project) };
};

/** A Gemini home whose user trusted `project` ("Trust folder"); removed with the test's folders. */
export const trustingHome = async (started: Started, project: string): Promise<GeminiHome> => {
  const home = await makeGeminiHome([project]);
  started.projects.push(home.home);
  return home;
};

/** One `gemini -p` run on a script, and the scripted model that answered it. */
export interface ScriptedRun {
  run: GeminiRun;
  model: ScriptedGemini;
  /** Enough of the run to tell why an assertion failed. */
  context: string;
}

/**
 * `gemini -p <prompt>` in the project on a script, as an unattended user who lets the agent change
 * code runs it (`--approval-mode yolo` unless `args` say otherwise).
 */
export const geminiScripted = async (
  started: Started,
  { project, home }: Pick<GeminiProject, 'project' | 'home'>,
  steps: Step[],
  prompt: string,
  options: Pick<GeminiOptions, 'args' | 'env' | 'timeoutMs'> = {},
): Promise<ScriptedRun> => {
  const model = await startScriptedGemini(steps);
  started.streams.push({ close: () => void model.close() });
  const { args = ['--approval-mode', 'yolo'], ...rest } = options;
  const run = await runGemini({ cwd: project, home, baseUrl: model.baseUrl, prompt, args, ...rest });
  const context = `gemini exited ${run.code} after ${model.turns().length} model requests (${model.overruns} past the script)\n${run.stdout}\n${run.stderr}`;
  return { run, model, context };
};

type Settings = { hooks: Record<string, Array<{ hooks: Array<Record<string, unknown>> }>> };

/**
 * Adds a hook of the user's own after pulse's for `event` in `.gemini/settings.json`: it appends each
 * input Gemini gives it to a file, one JSON line each, and answers nothing, so it changes nothing.
 * Returns the inputs so far.
 */
export const recordHookInputs = async (
  project: string,
  event: string,
): Promise<() => Promise<Array<Record<string, unknown>>>> => {
  const settings = (await readJson(project, SETTINGS)) as Settings;
  const record = join(project, `.hook-inputs-${event}.jsonl`);
  settings.hooks[event]!.push({
    hooks: [{ type: 'command', name: `record-${event}`, command: `{ cat; echo; } >> '${record}'` }],
  });
  await writeJson(project, SETTINGS, settings);
  return () => readJsonLines(record);
};

/** The command of pulse's own hook for one event in `.gemini/settings.json`. */
export const pulseHookCommand = async (project: string, event: string): Promise<string> => {
  const settings = (await readJson(project, SETTINGS)) as Settings;
  return String(settings.hooks[event]![0]!.hooks[0]!.command);
};
