import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type HookAgent, phaseOf } from '../hooks/events.js';
import { formatVerdict } from '../hooks/hook-output.js';
import { inPackageCache, installOf } from '../package/pulse-command.js';
import { VERSION } from '../package/version.js';
import type { JsonObject } from './json-edit.js';

/**
 * How an agent's hooks file lists handlers under `hooks.<event>`: Claude Code and Codex put them in
 * matcher groups (`[{ matcher?, hooks: [{ type, command | url, timeout }] }]`), Cursor lists them directly.
 */
export interface HookLayout {
  handlers(list: unknown[]): JsonObject[];
  entry(handler: JsonObject): JsonObject;
  /** A handler that runs a shell line, given this many seconds. */
  command(line: string, timeoutSeconds: number): JsonObject;
  /** A handler that runs a program with arguments and no shell, where the agent has one. */
  program?(file: string, args: string[], timeoutSeconds: number): JsonObject;
  prepare?(doc: JsonObject): void;
}

/**
 * How an agent's hook reaches the daemon: Claude Code posts it itself (`http`, no process at all);
 * a command hook forwards its stdin with `curl` (a fraction of a Node start); `node` runs
 * `pulse hook`, for a machine without curl or a POSIX shell; opencode, which has no command hooks,
 * runs pulse's `plugin`, which posts them from opencode's own process.
 */
export type HookTransport = 'http' | 'curl' | 'node' | 'plugin';

/** Where the `node` transport finds node and this clone's CLI; absolute, since pulse is not installed globally. */
export interface HookRuntime {
  nodePath: string;
  cliPath: string;
}

/** Everything a hook handler names: the daemon's port, the project, and for `node` the runtime. */
export interface HookTarget {
  port: number;
  project: string;
  runtime: HookRuntime;
  /** How the user runs pulse (`pulse`, `npx pulse-agent`, …), for the hint to start the daemon. */
  pulse: string;
}

/** Seconds Claude Code and Codex give a hook before they cancel it; a pulse hook answers in milliseconds. */
export const HOOK_TIMEOUT_SECONDS = 10;

/** Seconds for the session-start hook that may start the daemon: a cold start on a busy machine takes seconds. */
export const AUTOSTART_TIMEOUT_SECONDS = 30;

/**
 * Past this a command hook gives up on the daemon and lets the agent go on (it fails open), as
 * `ASK_TIMEOUT_MS`; below `HOOK_TIMEOUT_SECONDS`, so the warning comes before the agent cancels.
 */
const CURL_MAX_SECONDS = 8;

/**
 * The node running this and the `pulse` bin beside this code (`dist/bundle/bin.cjs` next to the
 * bundle, `dist/src/bin.cjs` next to tsc's output): the CommonJS entry, which starts a hook faster
 * than the ES module.
 */
export const currentRuntime = (): HookRuntime => {
  const bundled = fileURLToPath(new URL('./bin.cjs', import.meta.url));
  return {
    nodePath: process.execPath,
    cliPath: existsSync(bundled) ? bundled : fileURLToPath(new URL('../bin.cjs', import.meta.url)),
  };
};

/** A path in double quotes for a POSIX shell; on Windows paths hold no `"` and backslashes are separators. */
export const shellQuote = (path: string, platform = process.platform): string =>
  platform === 'win32' ? `"${path}"` : `"${path.replace(/["\\$`]/g, '\\$&')}"`;

/** Any text in single quotes for a POSIX shell: nothing inside is expanded. */
const singleQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/** A path as a query value with nothing a shell or a URL reader could take for the end of it (RFC 3986). */
const queryValue = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The daemon's route for one hook event of one agent, for the project it was set up for. */
export const hookRouteUrl = (
  agent: HookAgent,
  event: string,
  { port, project }: Pick<HookTarget, 'port' | 'project'>,
) => `http://127.0.0.1:${port}/hook/${agent}/${event}?project=${queryValue(project)}`;

/** The end every `node` hook command has, whichever node and clone it names. */
const nodeCommandSuffix = (agent: HookAgent, event: string): string => ` hook ${agent} --event ${event}`;

/** `"<node>" "<bin.cjs>" hook <agent> --event <event>`. */
export const nodeHookCommand = (agent: HookAgent, event: string, runtime: HookRuntime): string =>
  `${shellQuote(runtime.nodePath)} ${shellQuote(runtime.cliPath)}${nodeCommandSuffix(agent, event)}`;

/**
 * What runs this pulse's bin from any folder and for good: node and the bin, or, when the bin
 * lies in a package manager's cache (npx), which may be cleaned, npx with this very version,
 * which fetches it again if it was.
 */
export const stableBinCommand = (runtime: HookRuntime): string =>
  inPackageCache(runtime.cliPath)
    ? `npx -y pulse-agent@${VERSION}`
    : `${shellQuote(runtime.nodePath)} ${shellQuote(runtime.cliPath)}`;

/**
 * The session-start hook of `--autostart`: `pulse hook` that starts the daemon (`pulse start
 * --detach`) for this project and port when none answers, then answers the hook as ever.
 */
export const autostartHookCommand = (agent: HookAgent, event: string, target: HookTarget): string =>
  `${stableBinCommand(target.runtime)} hook ${agent} --event ${event} --autostart -p ${shellQuote(target.project)} --port ${target.port}`;

const AUTOSTART = / hook ([a-z]+) --event (\w+) --autostart -p "((?:[^"\\]|\\.)*)" --port (\d+)$/;

/** Stands for the warning line in an agent's "change nothing" while the shell line is built. */
const WARNING_SLOT = '\u0000warning\u0000';

/**
 * A POSIX shell line that posts the hook's stdin to the daemon and prints its answer. When none
 * comes (nothing on the port, too slow, a refusal such as a missing token) it prints the agent's
 * "change nothing", so a hook never wedges an agent, and says why once: on stderr, and in the
 * answer where the agent's format has a place for it (Claude Code and Codex show a `systemMessage`;
 * Codex shows no hook's stderr).
 */
export const curlHookCommand = (
  agent: HookAgent,
  event: string,
  target: Omit<HookTarget, 'runtime'>,
): string => {
  const where = `at 127.0.0.1:${target.port} for ${target.project}`;
  const after = `; not enforcing replans. Start it with: ${target.pulse} start -p ${target.project} --port ${target.port}`;
  // The message's fixed parts go in JSON-escaped (without their quotes); $w is one of the fixed phrases.
  const json = (text: string) => JSON.stringify(text).slice(1, -1);
  const phase = phaseOf(agent, event) ?? 'session-start';
  const [before, rest] = formatVerdict({ agent, event, phase }, { notice: WARNING_SLOT }).split(
    JSON.stringify(WARNING_SLOT).slice(1, -1),
  );
  // printf's format is the answer with the line in it; a % of the answer's own is doubled.
  const literal = (text: string) => text.replaceAll('%', '%%');
  const answer =
    rest === undefined
      ? `printf '%s\n' ${singleQuote(before!)}`
      : `printf ${singleQuote(`${literal(before!)}pulse: the daemon %s %s%s${literal(rest)}\n`)} "$w" ${singleQuote(json(where))} ${singleQuote(json(after))}`;
  return [
    `o=$(curl -sSf -m ${CURL_MAX_SECONDS} -H 'content-type: application/json'`,
    ` -H "authorization: Bearer \${PULSE_TOKEN-}" --data-binary @- ${singleQuote(hookRouteUrl(agent, event, target))} 2>/dev/null)`,
    ` && printf '%s\n' "$o"`,
    ` || { e=$?; case $e in 7) w='is not running';; 28) w='did not answer within ${CURL_MAX_SECONDS} s';;`,
    ` 22) w='refused the hook (is PULSE_TOKEN set?)';; *) w="could not be asked (curl exit $e)";; esac;`,
    ` printf 'pulse: the daemon %s %s%s\n' "$w" ${singleQuote(where)} ${singleQuote(after)} >&2; ${answer}; }`,
  ].join('');
};

/** Claude Code's HTTP hook: it posts the hook JSON to the daemon itself, with $PULSE_TOKEN when set. */
const httpHandler = (agent: HookAgent, event: string, target: HookTarget): JsonObject => ({
  type: 'http',
  url: hookRouteUrl(agent, event, target),
  headers: { Authorization: 'Bearer $PULSE_TOKEN' },
  allowedEnvVars: ['PULSE_TOKEN'],
  timeout: HOOK_TIMEOUT_SECONDS,
});

/** The handler pulse puts in an agent's hooks file for one event, in the file's layout. */
export const hookHandler = (
  agent: HookAgent,
  event: string,
  transport: HookTransport,
  target: HookTarget,
  layout: Pick<HookLayout, 'command' | 'program'>,
): JsonObject => {
  if (transport === 'http') return httpHandler(agent, event, target);
  if (transport === 'node' && layout.program !== undefined) {
    const { nodePath, cliPath } = target.runtime;
    return layout.program(nodePath, [cliPath, 'hook', agent, '--event', event], HOOK_TIMEOUT_SECONDS);
  }
  const command =
    transport === 'curl'
      ? curlHookCommand(agent, event, target)
      : nodeHookCommand(agent, event, target.runtime);
  return layout.command(command, HOOK_TIMEOUT_SECONDS);
};

/** A pulse hook found in an agent's hooks file: how it reaches a daemon, and which. */
export type FoundPulseHook =
  | { transport: 'http' | 'curl' | 'plugin'; port: number; project: string }
  /** `runtime`: the node and bin it starts pulse with; null when it runs `npx -y pulse-agent@<version>`. */
  | { transport: 'autostart'; port: number; project: string; runtime: HookRuntime | null }
  | { transport: 'node'; runtime: HookRuntime };

/** The `"<node>" "<bin.cjs>"` a hook command starts with, or null when it starts otherwise (npx). */
const quotedRuntime = (command: string): HookRuntime | null => {
  const paths = /^"((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)" hook /.exec(command);
  const unquote = (path: string) => path.replace(/\\(.)/g, '$1');
  return paths ? { nodePath: unquote(paths[1]!), cliPath: unquote(paths[2]!) } : null;
};

/** A handler that runs a program with no shell (`exec`, `args`), as the shell line that would run the same. */
const programLine = ({ exec, args }: JsonObject): string | undefined => {
  if (typeof exec !== 'string' || !Array.isArray(args) || !args.every((arg) => typeof arg === 'string'))
    return undefined;
  const [script, ...rest] = args as string[];
  return [shellQuote(exec), ...(script === undefined ? [] : [shellQuote(script)]), ...rest].join(' ');
};

const ROUTE = /http:\/\/127\.0\.0\.1:(\d+)\/hook\/([a-z]+)\/(\w+)\?project=([^'"\s]+)/;

/** Whether a handler of the user's hooks file is a pulse hook for this agent's event, and where it points. */
export const findPulseHook = (
  agent: HookAgent,
  event: string,
  handler: JsonObject,
): FoundPulseHook | null => {
  const text =
    [handler.url, handler.command, handler.bash, programLine(handler)].find(
      (field) => typeof field === 'string',
    ) ?? '';
  const autostart = AUTOSTART.exec(text);
  if (autostart !== null && autostart[1] === agent && autostart[2] === event) {
    return {
      transport: 'autostart',
      port: Number(autostart[4]),
      project: autostart[3]!.replace(/\\(.)/g, '$1'),
      runtime: quotedRuntime(text),
    };
  }
  const route = ROUTE.exec(text);
  if (route !== null && route[2] === agent && route[3] === event) {
    return {
      transport: handler.type === 'http' ? 'http' : 'curl',
      port: Number(route[1]),
      project: decodeURIComponent(route[4]!),
    };
  }
  if (!text.endsWith(nodeCommandSuffix(agent, event))) return null;
  return { transport: 'node', runtime: quotedRuntime(text) ?? { nodePath: '', cliPath: '' } };
};

/**
 * Whether a pulse hook found in the file reaches the same daemon as `target` (same port and
 * project, or this node and install: its bin, or the `dist/src/` entry an older setup named), so
 * it can be brought up to date without `--force`.
 */
export const reachesTarget = (found: FoundPulseHook, target: HookTarget): boolean => {
  if (found.transport !== 'node') return found.port === target.port && found.project === target.project;
  const { nodePath, cliPath } = target.runtime;
  return found.runtime.nodePath === nodePath && installOf(found.runtime.cliPath) === installOf(cliPath);
};
