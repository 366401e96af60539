import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonLines } from '../support/files.js';
import type { trackStarted } from '../support/started.js';
import { type CodexRun, codexConfig, makeCodexHome, runCodexExec } from './codex.js';
import { type ListedHook, reviewHooks, trustProject } from './codex-trust.js';
import { type ScriptedModel, type Step, startScriptedModel } from './openai-model.js';
import { type PulseProject, pulseProjectFor } from './pulse-project.js';

// The scene of each Codex test: a git project set up by `pulse setup codex --write` beside a real
// `pulse start`, and one `codex exec` run in it on a scripted model, the project trusted and its
// hooks reviewed as the user does before Codex uses either.

type Started = ReturnType<typeof trackStarted>;

/**
 * A fresh git repository (Codex's exec wants one) with `pulse start` on it and `pulse setup codex
 * --write` done; `prepare` runs on the folder before the daemon starts.
 */
export const setUpProject = (
  started: Started,
  prefix: string,
  prepare: (project: string) => Promise<void> = async () => {},
): Promise<PulseProject> => pulseProjectFor(started, 'codex', { prefix, prepare });

const HOOKS_FILE = ['.codex', 'hooks.json'];

type HooksFile = { hooks: Record<string, Array<{ hooks: Array<{ type: string; command: string }> }>> };

/** The command of pulse's own handler for one event in `.codex/hooks.json`, as Codex runs it (`bash -c`). */
export const pulseHookCommand = async (project: string, event: string): Promise<string> => {
  const file = JSON.parse(await readFile(join(project, ...HOOKS_FILE), 'utf8')) as HooksFile;
  return file.hooks[event]![0]!.hooks[0]!.command;
};

/** What a hook command printed when run by hand as Codex runs it: `bash -c`, the input on stdin. */
export const runHookCommand = (command: string, input: string) => {
  const { status, stdout, stderr } = spawnSync('bash', ['-c', command], { input, encoding: 'utf8' });
  return { code: status, stdout, stderr };
};

/**
 * Adds a hook of the user's own after pulse's for `event`: it appends each input Codex gives it to a
 * file, one JSON line each, and answers nothing, so it changes nothing. Returns the inputs so far.
 * (Add it before the run's hooks are reviewed; pulse's keep their keys, being first.)
 */
export const recordHookInputs = async (
  project: string,
  event: string,
): Promise<() => Promise<Array<Record<string, unknown>>>> => {
  const hooksPath = join(project, ...HOOKS_FILE);
  const record = join(project, `.hook-inputs-${event}.jsonl`);
  const file = JSON.parse(await readFile(hooksPath, 'utf8')) as HooksFile;
  const command = `{ cat; echo; } >> '${record}'`;
  file.hooks[event]!.push({ hooks: [{ type: 'command', command }] });
  await writeFile(hooksPath, JSON.stringify(file, null, 2));
  return () => readJsonLines(record);
};

/** One `codex exec` run on a script, what the model saw, and the hooks the user reviewed before it. */
export interface ScriptedRun {
  run: CodexRun;
  model: ScriptedModel;
  reviewed: ListedHook[];
  /** Enough of the run to tell why an assertion failed. */
  context: string;
}

/**
 * What a careful unattended user runs: `codex exec` (approval "never", its default) that may write
 * only inside the project, in a project they trusted and whose hooks they reviewed, with a throwaway
 * HOME and CODEX_HOME (removed with the project) and the model answering from `steps`.
 */
export const execScripted = async (
  started: Started,
  project: string,
  steps: Step[],
  prompt: string,
): Promise<ScriptedRun> => {
  const model = await startScriptedModel(steps);
  started.streams.push({ close: () => void model.close() });
  const home = await makeCodexHome(codexConfig(model.baseUrl));
  started.projects.push(home.home);
  await trustProject(home, project);
  const reviewed = await reviewHooks(home, project);
  const run = await runCodexExec({ cwd: project, home, prompt, args: ['--sandbox', 'workspace-write'] });
  const context = `codex exec exited ${run.code} after ${model.turns().length} model requests\n${run.stderr}`;
  return { run, model, reviewed, context };
};
