import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'smol-toml';
import { hookEvents } from '../hooks/events.js';
import { findPulseHook } from './hook-handlers.js';
import { isJsonObject, type JsonObject } from './json-edit.js';

// Codex runs a project's `.codex/` only in a project the user trusted, and its hooks only once the
// user reviewed them; both are kept in the user's `$CODEX_HOME/config.toml`. pulse reads them to
// say so, and never writes them: trusting is the user's decision.

/** Where Codex keeps the user's config: `$CODEX_HOME`, else `~/.codex`. */
export const codexHome = (env: NodeJS.ProcessEnv): string => env.CODEX_HOME || join(homedir(), '.codex');

/** One of pulse's hooks in `.codex/hooks.json`, and whether the user's review covers it as it stands. */
export interface ReviewedHook {
  event: string;
  /** Codex's key for it: `<hooks.json>:<event>:<group>:<handler>`. */
  key: string;
  status: 'trusted' | 'untrusted' | 'modified' | 'disabled';
}

/** What Codex will make of the project's `.codex/`: trusted or not, and each pulse hook's review. */
export interface CodexGates {
  configFile: string;
  /** The folder Codex trusts or not: the real path of the git root (or of the project, outside git). */
  root: string;
  trust: 'trusted' | 'untrusted' | 'unset';
  hooks: ReviewedHook[];
  /** The user's config.toml could not be read or parsed: nothing above could be told. */
  problem?: string;
}

const git = promisify(execFile);

const SNAKE: Record<string, string> = {
  SessionStart: 'session_start',
  UserPromptSubmit: 'user_prompt_submit',
  PreToolUse: 'pre_tool_use',
  PostToolUse: 'post_tool_use',
  Stop: 'stop',
};

/** Events whose matcher is part of a hook's identity; Codex ignores it on the others. */
const MATCHER_EVENTS = new Set(['pre_tool_use', 'post_tool_use', 'session_start', 'permission_request']);

/** JSON with every object's keys sorted, no spaces: what Codex hashes. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
};

/**
 * Codex's review hash of one command hook: sha256 of its normalized identity (event, matcher where
 * it counts, and the handler: command, timeout defaulting to 600 s, async, status message).
 */
export const codexHookHash = (event: string, matcher: unknown, handler: JsonObject): string => {
  const identity: JsonObject = {
    event_name: event,
    hooks: [
      {
        type: 'command',
        command: handler.command,
        timeout: Math.max(1, typeof handler.timeout === 'number' ? handler.timeout : 600),
        async: false,
        ...(typeof handler.statusMessage === 'string' ? { statusMessage: handler.statusMessage } : {}),
      },
    ],
    ...(MATCHER_EVENTS.has(event) && typeof matcher === 'string' ? { matcher } : {}),
  };
  return `sha256:${createHash('sha256').update(canonical(identity)).digest('hex')}`;
};

/** The folder Codex keys trust by: the real path of the git root, or of the project outside git. */
const trustRoot = async (project: string): Promise<string> => {
  try {
    const { stdout } = await git('git', ['-C', project, 'rev-parse', '--show-toplevel']);
    return await realpath(stdout.trim());
  } catch {
    return realpath(project).catch(() => project);
  }
};

/** Each pulse hook of the project's `.codex/hooks.json` with its review key and hash. */
const pulseHooksOf = async (root: string) => {
  const file = join(root, '.codex', 'hooks.json');
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return [];
  }
  const hooks = isJsonObject(doc) && isJsonObject(doc.hooks) ? doc.hooks : {};
  return hookEvents('codex').flatMap((event) => {
    const groups = hooks[event];
    if (!Array.isArray(groups)) return [];
    return groups.flatMap((group, g) =>
      isJsonObject(group) && Array.isArray(group.hooks)
        ? group.hooks.flatMap((handler: unknown, h: number) =>
            isJsonObject(handler) && findPulseHook('codex', event, handler) !== null
              ? [
                  {
                    event,
                    key: `${file}:${SNAKE[event]}:${g}:${h}`,
                    hash: codexHookHash(SNAKE[event]!, group.matcher, handler),
                  },
                ]
              : [],
          )
        : [],
    );
  });
};

/** Reads, never writes, what Codex's user config says of this project and of pulse's hooks in it. */
export const readCodexGates = async (project: string, env: NodeJS.ProcessEnv): Promise<CodexGates> => {
  const configFile = join(codexHome(env), 'config.toml');
  const root = await trustRoot(project);
  let config: JsonObject = {};
  let problem: string | undefined;
  try {
    config = parse(await readFile(configFile, 'utf8')) as JsonObject;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      problem = `${configFile} cannot be read: ${(error as Error).message.split('\n')[0]}`;
    }
  }
  const projects = isJsonObject(config.projects) ? config.projects : {};
  const entry = projects[root];
  const level = isJsonObject(entry) ? entry.trust_level : undefined;
  const trust = level === 'trusted' ? 'trusted' : level === 'untrusted' ? 'untrusted' : 'unset';
  const state = isJsonObject(config.hooks) && isJsonObject(config.hooks.state) ? config.hooks.state : {};
  const hooks = (await pulseHooksOf(root)).map(({ event, key, hash }): ReviewedHook => {
    const reviewed = isJsonObject(state[key]) ? state[key] : {};
    const status =
      reviewed.enabled === false
        ? 'disabled'
        : reviewed.trusted_hash === undefined
          ? 'untrusted'
          : reviewed.trusted_hash === hash
            ? 'trusted'
            : 'modified';
    return { event, key, status };
  });
  return { configFile, root, trust, hooks, ...(problem ? { problem } : {}) };
};

/** One thing Codex will or will not do with pulse's entries, and the user's step when it will not. */
export interface GateVerdict {
  ok: boolean;
  message: string;
  fix?: string;
}

/** What the gates mean for pulse, in words: each closed gate with the exact step that opens it. */
export const gateVerdicts = (gates: CodexGates): GateVerdict[] => {
  const { root, configFile } = gates;
  if (gates.problem !== undefined) {
    return [
      {
        ok: false,
        message: `cannot tell whether Codex trusts ${root} or pulse's hooks: ${gates.problem}`,
        fix: `Fix ${configFile} (Codex cannot read it either), then run this again.`,
      },
    ];
  }
  if (gates.trust !== 'trusted') {
    return [
      {
        ok: false,
        message:
          gates.trust === 'untrusted'
            ? `${configFile} marks ${root} untrusted: Codex ignores its .codex/ (pulse's server and hooks)`
            : `Codex does not trust ${root} yet: it ignores its .codex/ (pulse's server and hooks) with a warning`,
        fix:
          gates.trust === 'untrusted'
            ? `If you trust it, set trust_level = "trusted" under [projects."${root}"] in ${configFile}; pulse never does that for you.`
            : `Run codex in ${root} and choose "Trust and continue" (or run \`codex exec --trust\` there once); pulse never trusts a project for you.`,
      },
    ];
  }
  const waiting = gates.hooks.filter((hook) => hook.status !== 'trusted');
  if (gates.hooks.length > 0 && waiting.length === 0) {
    return [
      { ok: true, message: `Codex trusts ${root} and will run pulse's ${gates.hooks.length} reviewed hooks` },
    ];
  }
  if (waiting.length === 0) return [];
  const disabled = waiting.filter((hook) => hook.status === 'disabled');
  const unreviewed = waiting.filter((hook) => hook.status !== 'disabled');
  const verdicts: GateVerdict[] = [];
  if (unreviewed.length > 0) {
    const what = unreviewed.map(
      (hook) => `${hook.event} (${hook.status === 'modified' ? 'changed since review' : 'new'})`,
    );
    verdicts.push({
      ok: false,
      message: `Codex will not run ${unreviewed.length} of pulse's hooks until you review them: ${what.join(', ')}. Until then \`codex exec\` skips them without a word and no replan is enforced`,
      fix: `Run codex in ${root} and choose "Trust all and continue" at "Hooks need review" (or review them in /hooks). Each new port or path pulse setup writes needs a new review.`,
    });
  }
  if (disabled.length > 0) {
    verdicts.push({
      ok: false,
      message: `pulse's ${disabled.map((hook) => hook.event).join(', ')} hook${disabled.length === 1 ? ' is' : 's are'} disabled in Codex`,
      fix: `Enable ${disabled.length === 1 ? 'it' : 'them'} in codex's /hooks (or remove enabled = false from its [hooks.state] entry in ${configFile}).`,
    });
  }
  return verdicts;
};
