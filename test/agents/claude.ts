import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonLines, killGroup } from './cli-process.js';

/** The real Claude Code binary, pinned by `test/agents/cli/package.json`. */
export const CLAUDE = fileURLToPath(new URL('./cli/node_modules/.bin/claude', import.meta.url));

/**
 * Whether this run is the agent suite's (`test/agents/vitest.config.ts` sets it): the root config
 * also collects these files, and skips them rather than run a real agent CLI in `npm test`.
 */
export const inAgentSuite = process.env.PULSE_AGENT_SUITE === '1';

/** One line of `--output-format stream-json`: `system` (init, hook events), `assistant`, `user`, `result`. */
export interface StreamEvent {
  type: string;
  subtype?: string;
  [key: string]: unknown;
}

/** How one `claude -p` run ended, and what it printed. */
export interface ClaudeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** The stream-json lines of stdout that parse. */
  events: StreamEvent[];
}

/** Options of one run: the project it works in, the model it talks to, and anything extra. */
export interface ClaudeOptions {
  project: string;
  /** The scripted model's base URL (`ANTHROPIC_BASE_URL`). */
  modelUrl: string;
  prompt: string;
  /** More arguments, before the prompt. Never a permission bypass: the point is that none is needed. */
  args?: string[];
  env?: Record<string, string>;
  /** A HOME to reuse (a second prompt with `--continue`); a fresh temp one, removed after, when absent. */
  home?: string;
  /** The user's own `~/.claude/settings.json` (their permissions, not pulse's). */
  userSettings?: object;
  /** The user's `~/.claude.json` state (trusted folders, onboarding), written before the run. */
  userState?: object;
  timeoutMs?: number;
}

/**
 * The environment of a scripted run: the real HOME and config are never read or written, nothing
 * is sent anywhere but the scripted model, nothing updates itself.
 */
export const claudeEnv = (home: string, modelUrl: string): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  CLAUDE_CONFIG_DIR: join(home, '.claude'),
  XDG_CONFIG_HOME: join(home, '.config'),
  TMPDIR: tmpdir(),
  ANTHROPIC_BASE_URL: modelUrl,
  ANTHROPIC_API_KEY: 'test',
  DISABLE_TELEMETRY: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_ERROR_REPORTING: '1',
});

/** The one-line notices Claude Code adds to stream-json (`system/informational`): what a -p user could see of hooks at all. */
export const notices = (run: ClaudeRun) =>
  run.events.filter((event) => event.subtype === 'informational').map((event) => event.content);

/** Claude Code's notice for a hook that failed (refused, a 500, not JSON): the call ran unchecked. */
export const NO_VERDICT = "A hook gave no usable answer, so it didn't check this action.";

/**
 * Runs `claude -p --output-format stream-json --verbose <prompt>` in `project`, in its own process
 * group: on timeout, and after any exit, the group is killed, so no hook or server it started outlives it.
 */
export const runClaude = async ({
  project,
  modelUrl,
  prompt,
  args = [],
  env = {},
  home,
  userSettings,
  userState,
  timeoutMs = 90_000,
}: ClaudeOptions): Promise<ClaudeRun> => {
  if (!existsSync(CLAUDE)) {
    throw new Error(`No Claude Code at ${CLAUDE}: run npm ci --no-audit --no-fund --prefix test/agents/cli`);
  }
  const ownHome = home ?? (await mkdtemp(join(tmpdir(), 'pulse-claude-home-')));
  const config = join(ownHome, '.claude');
  await mkdir(config, { recursive: true });
  if (userSettings !== undefined)
    await writeFile(join(config, 'settings.json'), JSON.stringify(userSettings));
  // With CLAUDE_CONFIG_DIR set, Claude Code keeps its state file inside it.
  if (userState !== undefined) await writeFile(join(config, '.claude.json'), JSON.stringify(userState));
  try {
    const child = spawn(
      CLAUDE,
      ['-p', '--output-format', 'stream-json', '--verbose', ...args, '--', prompt],
      {
        cwd: project,
        env: { ...claudeEnv(ownHome, modelUrl), ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data) => {
      stdout += data;
    });
    child.stderr.on('data', (data) => {
      stderr += data;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
    }).finally(() => {
      clearTimeout(timer);
      killGroup(child.pid);
    });
    return { code, signal, timedOut, stdout, stderr, events: jsonLines<StreamEvent>(stdout) };
  } finally {
    if (home === undefined) await rm(ownHome, { recursive: true, force: true });
  }
};
