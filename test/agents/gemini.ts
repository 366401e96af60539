import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonLines, killGroup } from './cli-process.js';

/** The real Gemini CLI the agent suite pins (`test/agents/cli/package.json`). */
export const GEMINI_BIN = fileURLToPath(new URL('./cli/node_modules/.bin/gemini', import.meta.url));

/**
 * The model every run names (`-m`): a fixed slug skips the "auto" router's classifier request, and
 * with it the CLI offers its usual tools (FINDINGS-gemini.md, "Headless and offline").
 */
export const GEMINI_MODEL = 'gemini-2.5-pro';

/** A throwaway `HOME` holding the user's `~/.gemini`, so no run reads or writes the real one. */
export interface GeminiHome {
  home: string;
  /** `$HOME/.gemini`. */
  geminiDir: string;
  remove(): Promise<void>;
}

/**
 * The user-level `~/.gemini/settings.json` of every run: an API key login (the key itself is a dummy
 * in the environment; the base URL points it at the scripted model), usage statistics and update
 * checks off so nothing but the scripted model is asked anything. `extra` is merged on top.
 */
export const userSettings = (extra: Record<string, unknown> = {}) => ({
  security: { auth: { selectedType: 'gemini-api-key' } },
  privacy: { usageStatisticsEnabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  ...extra,
});

/**
 * Creates a temp HOME with `~/.gemini/settings.json`, and trusts each of `trusted` in
 * `~/.gemini/trustedFolders.json` as the user's "Trust folder" choice writes it (pulse never does).
 */
export const makeGeminiHome = async (
  trusted: string[] = [],
  settings: Record<string, unknown> = userSettings(),
): Promise<GeminiHome> => {
  const home = await mkdtemp(join(tmpdir(), 'pulse-gemini-home-'));
  const geminiDir = join(home, '.gemini');
  await mkdir(geminiDir);
  await writeFile(join(geminiDir, 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  if (trusted.length > 0) {
    const folders = Object.fromEntries(trusted.map((folder) => [folder, 'TRUST_FOLDER']));
    await writeFile(join(geminiDir, 'trustedFolders.json'), `${JSON.stringify(folders, null, 2)}\n`);
  }
  return { home, geminiDir, remove: () => rm(home, { recursive: true, force: true }) };
};

/** One line of `-o stream-json`: `init`, `message`, `tool_use`, `tool_result`, `error`, `result`. */
export interface GeminiEvent {
  type: string;
  [key: string]: unknown;
}

/** How one `gemini -p` run ended, and what it printed. */
export interface GeminiRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** The JSON lines of stdout, parsed; lines that are not JSON are left out. */
  events: GeminiEvent[];
}

/** Options of one `gemini -p` run. */
export interface GeminiOptions {
  cwd: string;
  home: GeminiHome;
  /** The scripted model's base URL (`GOOGLE_GEMINI_BASE_URL`). */
  baseUrl: string;
  prompt: string;
  /** More flags (`--approval-mode yolo`); `-p`, `-o stream-json` and `-m` are always given. */
  args?: string[];
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Kills the run (its whole group) when aborted, for a run a test has seen enough of. */
  signal?: AbortSignal;
}

/**
 * Runs `gemini -p <prompt> -o stream-json -m gemini-2.5-pro` in `cwd` as an unattended user would,
 * with only a minimal environment (PATH, the temp HOME, a dummy key, the scripted base URL), stdin
 * closed. The CLI (and the copy of itself it relaunches) runs in a process group of its own, killed on
 * timeout and again after exit, so no hook or MCP child outlives it. Shell commands the model runs lead
 * process groups of their own (the CLI says so in the tool's description), so a test's commands must end.
 */
export const runGemini = ({
  cwd,
  home,
  baseUrl,
  prompt,
  args = [],
  env = {},
  timeoutMs = 90_000,
  signal,
}: GeminiOptions): Promise<GeminiRun> => {
  if (!existsSync(GEMINI_BIN)) {
    throw new Error(`No Gemini CLI at ${GEMINI_BIN}: run bash scripts/install-agent-clis.sh`);
  }
  return new Promise((resolve, reject) => {
    const child = spawn(GEMINI_BIN, ['-p', prompt, '-o', 'stream-json', '-m', GEMINI_MODEL, ...args], {
      cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home.home,
        TMPDIR: tmpdir(),
        LANG: 'C.UTF-8',
        GEMINI_API_KEY: 'scripted',
        GOOGLE_GEMINI_BASE_URL: baseUrl,
        ...env,
      },
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (data) => {
      stdout += data;
    });
    child.stderr.on('data', (data) => {
      stderr += data;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    const abort = () => killGroup(child.pid);
    signal?.addEventListener('abort', abort, { once: true });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, exitSignal) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      killGroup(child.pid);
      resolve({ code, signal: exitSignal, timedOut, stdout, stderr, events: jsonLines<GeminiEvent>(stdout) });
    });
  });
};
