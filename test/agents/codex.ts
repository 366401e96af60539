import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonLines, type ProcessRun, runInGroup } from './cli-process.js';

/** The real Codex CLI the agent suite pins (`test/agents/cli/package.json`). */
export const CODEX_BIN = fileURLToPath(new URL('./cli/node_modules/.bin/codex', import.meta.url));

/** The environment variable the scripted provider reads its (dummy) API key from. */
const KEY_VAR = 'PULSE_SCRIPTED_MODEL_KEY';

/** A throwaway `HOME` and `CODEX_HOME`, so no run ever reads or writes the user's real `~/.codex`. */
export interface CodexHome {
  home: string;
  codexHome: string;
  /** `$CODEX_HOME/config.toml`. */
  configFile: string;
  remove(): Promise<void>;
}

/**
 * The user-level `config.toml` that points Codex at a scripted model: a custom Responses provider
 * on 127.0.0.1, with a model slug Codex knows (so it offers its usual tools, `apply_patch`
 * included), analytics and update checks off. `extra` is appended as it is (trust, hook state).
 */
export const codexConfig = (baseUrl: string, extra = ''): string =>
  [
    'model = "gpt-5.5"',
    'model_provider = "scripted"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[model_providers.scripted]',
    'name = "Scripted"',
    `base_url = ${JSON.stringify(baseUrl)}`,
    'wire_api = "responses"',
    `env_key = "${KEY_VAR}"`,
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    extra,
  ].join('\n');

/** Creates a temp HOME with a CODEX_HOME inside it, and writes its `config.toml`. */
export const makeCodexHome = async (config: string): Promise<CodexHome> => {
  const home = await mkdtemp(join(tmpdir(), 'pulse-codex-home-'));
  const codexHome = join(home, '.codex');
  await mkdir(codexHome);
  const configFile = join(codexHome, 'config.toml');
  await writeFile(configFile, config);
  return { home, codexHome, configFile, remove: () => rm(home, { recursive: true, force: true }) };
};

/** One line of `codex exec --json`. */
export interface CodexEvent {
  type: string;
  item?: Record<string, unknown> & { type: string };
  [key: string]: unknown;
}

/** How a `codex exec` run ended, with everything it printed. */
export interface CodexRun extends ProcessRun {
  /** The JSON lines of stdout (`--json`), parsed; lines that are not JSON are left out. */
  events: CodexEvent[];
}

/** Options of one `codex exec` run. */
export interface CodexExecOptions {
  cwd: string;
  home: CodexHome;
  prompt: string;
  /** Flags before the prompt; `--json` is always added. */
  args?: string[];
  timeoutMs?: number;
  env?: Record<string, string>;
}

/**
 * Runs `codex exec --json <prompt>` in `cwd` as a user would, with only a minimal environment
 * (PATH, the temp HOME and CODEX_HOME, the scripted key), stdin closed. Codex runs in a process
 * group of its own, killed on timeout and again after exit, so no shell, hook or MCP child outlives it.
 */
export const runCodexExec = async ({
  cwd,
  home,
  prompt,
  args = [],
  timeoutMs = 90_000,
  env = {},
}: CodexExecOptions): Promise<CodexRun> => {
  const run = await runInGroup(CODEX_BIN, ['exec', '--json', ...args, prompt], {
    cwd,
    timeoutMs,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home.home,
      CODEX_HOME: home.codexHome,
      TMPDIR: tmpdir(),
      LANG: 'C.UTF-8',
      [KEY_VAR]: 'scripted',
      ...env,
    },
  });
  return { ...run, events: jsonLines<CodexEvent>(run.stdout) };
};
