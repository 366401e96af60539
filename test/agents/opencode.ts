import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readJsonLines } from '../support/files.js';
import { jsonLines, type ProcessRun, runInGroup } from './cli-process.js';

/**
 * The real opencode the agent suite pins: the native binary of `opencode-linux-x64` (the platform
 * package `opencode-ai` would pick; `opencode-ai` itself cannot be locked here, see FINDINGS-opencode.md).
 */
export const OPENCODE_BIN = fileURLToPath(
  new URL('./cli/node_modules/opencode-linux-x64/bin/opencode', import.meta.url),
);

/** The opencode release the fixtures and findings are of. */
export const OPENCODE_VERSION = '1.18.33';

/**
 * A ripgrep for opencode's grep and glob tools: without `rg` on PATH it downloads one from GitHub at
 * run time, which fails offline. The Codex package the suite pins carries one.
 */
const RIPGREP_DIR = fileURLToPath(
  new URL(
    './cli/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-path',
    import.meta.url,
  ),
);

const RECORDING_PLUGIN = fileURLToPath(new URL('./opencode-recording-plugin.js', import.meta.url));

/**
 * Makes opencode skip its npm install of `@opencode-ai/plugin` into a config folder (`~/.config/opencode`,
 * a project's `.opencode`): it installs unless `node_modules/` exists and `package-lock.json` lists
 * the package, and the install costs ~30 s online and over a minute of retries offline.
 */
export const seedPluginDependencies = async (configDir: string) => {
  await mkdir(join(configDir, 'node_modules'), { recursive: true });
  const lock = { packages: { '': { dependencies: { '@opencode-ai/plugin': OPENCODE_VERSION } } } };
  await writeFile(join(configDir, 'package-lock.json'), `${JSON.stringify(lock)}\n`);
};

/** A throwaway HOME with its XDG folders, so no run reads or writes the user's opencode data. */
export interface OpencodeHome {
  home: string;
  /** Where the recording plugin writes (`PULSE_OPENCODE_RECORD`). */
  records: string;
  env: Record<string, string>;
  remove(): Promise<void>;
}

/** Creates a temp HOME whose global config folder needs no npm install, and a folder for the plugin's records. */
export const makeOpencodeHome = async (): Promise<OpencodeHome> => {
  const home = await mkdtemp(join(tmpdir(), 'pulse-opencode-home-'));
  const records = join(home, 'records');
  await mkdir(records);
  await seedPluginDependencies(join(home, '.config', 'opencode'));
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    PULSE_OPENCODE_RECORD: records,
  };
  return { home, records, env, remove: () => rm(home, { recursive: true, force: true }) };
};

/** The provider id and model the scripted server is configured as: `scripted/m`. */
export const OPENCODE_MODEL = 'scripted/m';

/**
 * A project's `opencode.json`: the scripted Chat Completions server as an `@ai-sdk/openai-compatible`
 * provider (bundled in the binary, nothing fetched), no updates or sharing, and `extra` merged in
 * (`mcp`, `permission`).
 */
export const opencodeConfig = (baseUrl: string, extra: Record<string, unknown> = {}) => ({
  $schema: 'https://opencode.ai/config.json',
  model: OPENCODE_MODEL,
  autoupdate: false,
  share: 'disabled',
  provider: {
    scripted: {
      npm: '@ai-sdk/openai-compatible',
      name: 'Scripted',
      options: { baseURL: baseUrl, apiKey: 'scripted' },
      models: { m: { name: 'm', tool_call: true } },
    },
  },
  ...extra,
});

/** pulse's daemon as a remote (streamable HTTP) MCP server named `pulse`, with a header. */
export const pulseMcp = (url: string) => ({
  mcp: { pulse: { type: 'remote', url, headers: { 'X-Pulse-Agent': 'opencode' } } },
});

/** What the recording plugin does at one call of a hook (see opencode-recording-plugin.js). */
export interface PluginAnswer {
  /** Only the nth call of the hook (1-based). */
  nth?: number;
  /** Only calls of this tool (`tool.execute.*`). */
  tool?: string;
  throw?: string;
  /** Pushed onto `output.system` (`experimental.chat.system.transform`). */
  system?: string;
  /** Appended to `output.output` (`tool.execute.after`). */
  appendOutput?: string;
  /** A text part added to the user's message (`chat.message`). */
  part?: string;
  /** Sent as the user's next message in the session, not awaited. */
  prompt?: string;
}

/** A prompt the recording plugin sends back on `session.idle`, at most `times` times (default once). */
export interface IdlePrompt {
  idlePrompt: string;
  times?: number;
}

/** The recording plugin's instructions: per hook, and under `event` a prompt for `session.idle`. */
export interface PluginAnswers {
  [hook: string]: PluginAnswer[] | IdlePrompt | undefined;
  event?: IdlePrompt;
}

/**
 * Puts the recording plugin in `project/.opencode/plugins/` (with its folder seeded, so opencode
 * installs nothing) and writes what it answers.
 */
export const installRecordingPlugin = async (
  project: string,
  home: OpencodeHome,
  answers: PluginAnswers = {},
) => {
  const config = join(project, '.opencode');
  await mkdir(join(config, 'plugins'), { recursive: true });
  await seedPluginDependencies(config);
  await copyFile(RECORDING_PLUGIN, join(config, 'plugins', 'pulse-recorder.js'));
  await writeFile(join(home.records, 'answers.json'), JSON.stringify(answers));
};

/** One recorded hook call: what opencode passed the plugin (serialised before the plugin changed it). */
export interface HookCall {
  input: Record<string, unknown>;
  output: Record<string, unknown>;
}

/** Every call of a hook the recording plugin saw (`event`: the events themselves). */
export const recordedCalls = <T = HookCall>(home: OpencodeHome, hook: string): Promise<T[]> =>
  readJsonLines<T>(join(home.records, `${hook}.jsonl`));

/** One line of `opencode run --format json`. */
export interface OpencodeEvent {
  type: string;
  sessionID?: string;
  part?: Record<string, unknown> & { state?: Record<string, unknown> };
  [key: string]: unknown;
}

/** How an `opencode run` ended, with everything it printed. */
export interface OpencodeRun extends ProcessRun {
  events: OpencodeEvent[];
}

/**
 * The environment opencode runs with, offline: a minimal one (the temp HOME and XDG folders,
 * ripgrep on PATH), no update check, no models.dev fetch.
 */
export const opencodeEnv = (home: OpencodeHome): NodeJS.ProcessEnv => ({
  PATH: `${RIPGREP_DIR}${delimiter}${process.env.PATH ?? '/usr/bin:/bin'}`,
  TMPDIR: tmpdir(),
  LANG: 'C.UTF-8',
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  ...home.env,
});

/**
 * Runs `opencode run --format json <prompt>` in `cwd` as a headless user would, offline
 * (`opencodeEnv`), stdin closed, in a process group of its own.
 */
export const runOpencode = async ({
  cwd,
  home,
  prompt,
  args = [],
  timeoutMs = 150_000,
}: {
  cwd: string;
  home: OpencodeHome;
  prompt: string;
  args?: string[];
  timeoutMs?: number;
}): Promise<OpencodeRun> => {
  const run = await runInGroup(OPENCODE_BIN, ['run', '--format', 'json', ...args, prompt], {
    cwd,
    timeoutMs,
    env: opencodeEnv(home),
  });
  return { ...run, events: jsonLines<OpencodeEvent>(run.stdout) };
};
