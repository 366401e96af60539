import { mkdir, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expectHeld } from '../../harness/hook-answers.js';
import { shellWord } from '../../src/package/pulse-command.js';
import { findPulseHook } from '../../src/setup/hook-handlers.js';
import type { JsonObject } from '../../src/setup/json-edit.js';
import { type ProfileSummary, summarizeProfile } from '../lib/cpu-profile-summary.js';
import { CLI, startDaemon } from '../lib/daemon.js';
import { connectSession, shouldInterrupt } from '../lib/session.js';
import { type Summary, summarize } from '../lib/stats.js';
import { timeCommandOk } from '../lib/timed-command.js';
import { hookInputs } from './inputs.js';
import { postHook, setUpHook, setUpOpencodePlugin } from './setup.js';

export interface HooksPlan {
  warmup: number;
  runs: number;
}

/**
 * What is timed, one of each per round: the floors (Node's start, each shell's, curl's own start
 * without a request), then each agent's hook as `pulse setup` writes it.
 */
export const HOOK_ROWS = [
  'node',
  'bash',
  'sh',
  'curl',
  'claude-http',
  'opencode-plugin',
  'codex-curl',
  'cursor-curl',
  'gemini-curl',
  'copilot-curl',
  'codex-node',
] as const;
export type HookRow = (typeof HOOK_ROWS)[number];

/** Codex, Gemini CLI and Copilot run a command hook as `bash -c '<command>'`; Cursor through a shell, taken to be `sh -c`. */
const BASH = '/bin/bash';
const SH = '/bin/sh';

export interface HooksResult {
  times: Record<HookRow, Summary>;
  /** The programs behind the rows: bash's and curl's versions, what `/bin/sh` is. */
  programs: { bash: string; sh: string; curl: string };
  /** The Codex PreToolUse command as set up, for a project at /home/me/app on the default port. */
  codexCommand: string;
  /** One node-fallback run under `node --cpu-prof`: where its time went. */
  profile: ProfileSummary;
  /** Distinct project and package files that ran code in that profile. */
  profiledFiles: number;
}

/** Edits guidance.md and waits until the daemon has a replan pending; resolves with its event id. */
const pendReplan = async (project: string, url: string): Promise<string> => {
  const client = await connectSession(url);
  try {
    await writeFile(join(project, '.pulse', 'guidance.md'), '# Guidance\n\nStop and use the new API.\n');
    for (;;) {
      const answer = await shouldInterrupt(client, null);
      if (answer.needs_replan && answer.pending_replan_event_id) return answer.pending_replan_event_id;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await client.close();
  }
};

const firstLine = async (file: string, args: string[]) =>
  (await timeCommandOk(file, args)).stdout.split('\n')[0]!.trim();

/** The node-fallback hook once under the V8 profiler, with the same input. */
const profileNodeHook = async (node: JsonObject, input: string, project: string, dir: string) => {
  const found = findPulseHook('codex', 'PreToolUse', node);
  if (found?.transport !== 'node') throw new Error(`not a node hook: ${JSON.stringify(node)}`);
  const { nodePath, cliPath } = found.runtime;
  const profileDir = join(dir, 'profile');
  const args = ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-interval', '100'];
  await timeCommandOk(nodePath, [...args, cliPath, 'hook', 'codex', '--event', 'PreToolUse'], {
    input,
    cwd: project,
  });
  const [file] = await readdir(profileDir);
  const profile = JSON.parse(await readFile(join(profileDir, file!), 'utf8'));
  const urls = new Set<string>(
    (profile.nodes as Array<{ callFrame: { url: string } }>)
      .map((frame) => frame.callFrame.url)
      .filter((url) => url.startsWith('file:')),
  );
  return { profile: summarizeProfile(profile), profiledFiles: urls.size };
};

/**
 * Times each agent's PreToolUse-style hook against one running daemon with a replan pending, so
 * every answer must hold the call: Claude Code's HTTP hook as one POST from this process, the
 * Codex, Cursor, Gemini CLI and Copilot curl commands and the node fallback through the shell each agent uses, read
 * back from the files the built `pulse setup --write` wrote; beside `node -e 0`, `bash -c true`
 * and `sh -c true`, one of each per round, the order rotating. Then profiles one node-fallback run.
 */
export const measureHooks = async (
  dir: string,
  plan: HooksPlan,
  progress: (line: string) => void,
): Promise<HooksResult> => {
  const project = join(dir, 'project');
  const elsewhere = join(dir, 'node-setup');
  await mkdir(project);
  await mkdir(elsewhere);
  const daemon = await startDaemon(project, { startArgs: ['--log-level', 'warn'] });
  try {
    const port = Number(new URL(daemon.url).port);
    const at = { project, port };
    const claude = await setUpHook('claude', 'PreToolUse', 'http', at);
    const codex = await setUpHook('codex', 'PreToolUse', 'curl', at);
    const cursor = await setUpHook('cursor', 'beforeShellExecution', 'curl', at);
    const gemini = await setUpHook('gemini', 'BeforeTool', 'curl', at);
    const copilot = await setUpHook('copilot', 'preToolUse', 'curl', at);
    const opencode = await setUpOpencodePlugin(at, join(dir, 'opencode-plugin.mjs'));
    // Set up elsewhere, so it does not replace the curl hooks; it finds the daemon from the input's cwd.
    const node = await setUpHook('codex', 'PreToolUse', 'node', {
      ...at,
      project: elsewhere,
      args: ['--hooks', 'node'],
    });
    const eventId = await pendReplan(project, daemon.url);
    const inputs = await hookInputs(project);

    const floor = (file: string, args: string[]) => async () => (await timeCommandOk(file, args)).ms;
    const shellHook =
      (name: string, shell: string, handler: JsonObject, agent: 'codex' | 'cursor' | 'gemini' | 'copilot') =>
      async () => {
        const run = await timeCommandOk(shell, ['-c', (handler.command ?? handler.bash) as string], {
          input: inputs[agent],
          cwd: project,
        });
        expectHeld(name, agent, run.stdout, eventId);
        return run.ms;
      };
    const timers: Record<HookRow, () => Promise<number>> = {
      node: floor(process.execPath, ['-e', '0']),
      bash: floor(BASH, ['-c', 'true']),
      sh: floor(SH, ['-c', 'true']),
      curl: floor('curl', ['--version']),
      'claude-http': async () => {
        const { ms, answer } = await postHook(claude, inputs.claude);
        expectHeld("Claude Code's HTTP hook", 'claude', answer, eventId);
        return ms;
      },
      'opencode-plugin': async () => {
        const { input, output } = JSON.parse(inputs.opencode);
        const started = performance.now();
        const held = await opencode(input, output).then(
          () => '{}',
          (error: Error) => JSON.stringify({ hold: error.message }),
        );
        const ms = performance.now() - started;
        expectHeld("pulse's opencode plugin", 'opencode', held, eventId);
        return ms;
      },
      'codex-curl': shellHook("Codex's curl hook", BASH, codex, 'codex'),
      'cursor-curl': shellHook("Cursor's curl hook", SH, cursor, 'cursor'),
      'gemini-curl': shellHook("Gemini CLI's curl hook", BASH, gemini, 'gemini'),
      'copilot-curl': shellHook("Copilot's curl hook", BASH, copilot, 'copilot'),
      'codex-node': shellHook('The node-fallback hook', BASH, node, 'codex'),
    };

    for (let n = 0; n < plan.warmup; n++) for (const row of HOOK_ROWS) await timers[row]();
    const samples = Object.fromEntries(HOOK_ROWS.map((row) => [row, [] as number[]])) as Record<
      HookRow,
      number[]
    >;
    for (let n = 0; n < plan.runs; n++) {
      // Which goes first rotates, so none always runs right after another's exit.
      for (let k = 0; k < HOOK_ROWS.length; k++) {
        const row = HOOK_ROWS[(n + k) % HOOK_ROWS.length]!;
        samples[row].push(await timers[row]());
      }
      if ((n + 1) % 25 === 0) progress(`${n + 1}/${plan.runs} rounds`);
    }

    const programs = {
      bash: (await firstLine(BASH, ['--version'])).replace(/^.*version (\S+).*$/, 'bash $1'),
      sh: await realpath(SH),
      curl: (await firstLine('curl', ['--version'])).split(' ').slice(0, 2).join(' '),
    };
    const encoded = encodeURIComponent(project);
    const codexCommand = (codex.command as string)
      .replaceAll(encoded, encodeURIComponent('/home/me/app'))
      .replaceAll(project, '/home/me/app')
      .replaceAll(`127.0.0.1:${port}`, '127.0.0.1:8765')
      .replaceAll(`--port ${port}`, '--port 8765')
      // Setup names pulse as this bench's built bundle; a user's installed pulse is `pulse`.
      .replaceAll(`node ${shellWord(CLI)} `, 'pulse ');
    return {
      times: Object.fromEntries(HOOK_ROWS.map((row) => [row, summarize(samples[row])])) as Record<
        HookRow,
        Summary
      >,
      programs,
      codexCommand,
      ...(await profileNodeHook(node, inputs.codex, project, dir)),
    };
  } finally {
    await daemon.stop();
  }
};
