import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readJsonLines } from '../support/files.js';
import { jsonLines, type ProcessRun, runInGroup } from './cli-process.js';

/** The real GitHub Copilot CLI the agent suite pins (`test/agents/cli/package.json`). */
export const COPILOT_BIN = fileURLToPath(new URL('./cli/node_modules/.bin/copilot', import.meta.url));

/** The command hook that records its input and answers from files (`recording-hook.sh`). */
const RECORDING_HOOK = fileURLToPath(new URL('./recording-hook.sh', import.meta.url));

/**
 * Where the native binary unpacks its JavaScript and prebuilds (`COPILOT_PKG_CACHE_HOME`), shared by
 * every run: unpacking into each temp HOME costs ~5 s a start.
 */
const PKG_CACHE = join(tmpdir(), 'pulse-copilot-pkg-cache');

/** The model slug the runs use: in Copilot's catalog, and given `create`/`edit`/`grep` (a gpt-5 slug gets `apply_patch` and `rg`). */
export const COPILOT_MODEL = 'claude-sonnet-4.5';

/** Every hook event Copilot CLI 1.0.102 runs from `.github/hooks/*.json`, in its camelCase spelling (`preMcpToolCall` is undocumented). */
export const COPILOT_EVENTS = [
  'sessionStart',
  'userPromptSubmitted',
  'userPromptTransformed',
  'preToolUse',
  'preMcpToolCall',
  'permissionRequest',
  'postToolUse',
  'postToolUseFailure',
  'agentStop',
  'subagentStart',
  'subagentStop',
  'errorOccurred',
  'preCompact',
  'notification',
  'sessionEnd',
] as const;

export type CopilotEvent = (typeof COPILOT_EVENTS)[number];

/** A throwaway HOME, so no run reads or writes the user's real `~/.copilot`. */
export interface CopilotHome {
  home: string;
  /** `$HOME/.copilot/config.json`, where `trustedFolders` lives. */
  configFile: string;
  remove(): Promise<void>;
}

/** Creates a temp HOME whose `~/.copilot/config.json` trusts `trustedFolders` (none: every folder untrusted). */
export const makeCopilotHome = async (trustedFolders: string[] = []): Promise<CopilotHome> => {
  const home = await mkdtemp(join(tmpdir(), 'pulse-copilot-home-'));
  const configFile = join(home, '.copilot', 'config.json');
  await mkdir(dirname(configFile));
  await writeFile(configFile, `${JSON.stringify({ trustedFolders }, null, 2)}\n`);
  return { home, configFile, remove: () => rm(home, { recursive: true, force: true }) };
};

/** One line of `copilot -p … --output-format json`. */
export interface CopilotEventLine {
  type: string;
  data?: Record<string, unknown>;
  [key: string]: unknown;
}

/** How a `copilot -p` run ended, with everything it printed. */
export interface CopilotRun extends ProcessRun {
  /** The JSON lines of stdout, parsed. */
  events: CopilotEventLine[];
}

/** Options of one `copilot -p` run. */
export interface CopilotOptions {
  cwd: string;
  home: CopilotHome;
  /** The scripted model's `…/v1`. */
  baseUrl: string;
  prompt: string;
  /** Flags after the prompt (permissions, `--trust-folder`); `--output-format json` is always added. */
  args?: string[];
  timeoutMs?: number;
  env?: Record<string, string>;
}

/**
 * Runs `copilot -p <prompt> --output-format json --no-auto-update` in `cwd` against a scripted Chat
 * Completions server, offline (`COPILOT_OFFLINE`, a custom `openai` provider with wire API
 * `completions`), with only a minimal environment and stdin closed, in a process group of its own.
 */
export const runCopilot = async ({
  cwd,
  home,
  baseUrl,
  prompt,
  args = [],
  timeoutMs = 90_000,
  env = {},
}: CopilotOptions): Promise<CopilotRun> => {
  const argv = ['-p', prompt, '--output-format', 'json', '--no-auto-update', ...args];
  const run = await runInGroup(COPILOT_BIN, argv, {
    cwd,
    timeoutMs,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home.home,
      TMPDIR: tmpdir(),
      LANG: 'C.UTF-8',
      COPILOT_PKG_CACHE_HOME: PKG_CACHE,
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_TYPE: 'openai',
      COPILOT_PROVIDER_WIRE_API: 'completions',
      COPILOT_PROVIDER_BASE_URL: baseUrl,
      COPILOT_MODEL,
      ...env,
    },
  });
  return { ...run, events: jsonLines<CopilotEventLine>(run.stdout) };
};

/** What a recording hook answers an event with: stdout JSON (or raw text), and for every call an exit code and a delay. */
export interface HookAnswer {
  output?: unknown;
  /** The output only for the `nth` call of the event (1-based); for every call when absent. */
  nth?: number;
  exit?: number;
  sleepSeconds?: number;
}

/** The recording hooks of one project: what each event was given, and how it answers. */
export interface RecordingHooks {
  /** The folder of the records and answers (outside the project, so the agent's searches miss it). */
  dir: string;
  /** Every input the event was given so far, parsed. */
  inputs(event: CopilotEvent): Promise<Array<Record<string, unknown>>>;
  answer(event: CopilotEvent, answer: HookAnswer): Promise<void>;
}

/**
 * Writes `.github/hooks/recording.json` in `project`: for each event a command hook running
 * `recording-hook.sh`, which records its stdin in a temp folder and answers what `answer` set
 * (nothing, exit 0, by default), within `timeoutSec`.
 */
export const recordingHooks = async (
  project: string,
  events: readonly CopilotEvent[] = COPILOT_EVENTS,
  timeoutSec = 10,
): Promise<RecordingHooks> => {
  const dir = await mkdtemp(join(tmpdir(), 'pulse-copilot-hooks-'));
  const hooks = Object.fromEntries(
    events.map((event) => [
      event,
      [{ type: 'command', bash: `sh '${RECORDING_HOOK}' '${dir}' ${event}`, timeoutSec }],
    ]),
  );
  await mkdir(join(project, '.github', 'hooks'), { recursive: true });
  await writeFile(
    join(project, '.github', 'hooks', 'recording.json'),
    `${JSON.stringify({ version: 1, hooks }, null, 2)}\n`,
  );
  return {
    dir,
    inputs: (event) => readJsonLines(join(dir, `${event}.jsonl`)),
    async answer(event, { output, exit, sleepSeconds, nth }) {
      const name = nth === undefined ? event : `${event}.${nth}`;
      if (output !== undefined)
        await writeFile(
          join(dir, `${name}.answer`),
          typeof output === 'string' ? output : JSON.stringify(output),
        );
      if (exit !== undefined) await writeFile(join(dir, `${event}.exit`), String(exit));
      if (sleepSeconds !== undefined) await writeFile(join(dir, `${event}.sleep`), String(sleepSeconds));
    },
  };
};

/** `.mcp.json` naming pulse's daemon as the streamable HTTP server `pulse`, with a header, as Copilot reads it. */
export const writeMcpJson = (project: string, url: string, file = '.mcp.json') =>
  writeFile(
    join(project, file),
    `${JSON.stringify({ mcpServers: { pulse: { type: 'http', url, headers: { 'X-Pulse-Agent': 'copilot' }, tools: ['*'] } } }, null, 2)}\n`,
  );

/** `--allow-tool` for exactly pulse's three tools, as a careful user pre-approves them. */
export const ALLOW_PULSE_TOOLS = [
  '--allow-tool=pulse(pulse_should_interrupt)',
  '--allow-tool=pulse(pulse_ack_replan)',
  '--allow-tool=pulse(pulse_ack_events)',
];
