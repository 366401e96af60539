import { copyFile, readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { HookAgent } from '../../src/hooks/events.js';
import { setupDialectOf } from '../../src/setup/agents.js';
import { findPulseHook, type HookTransport } from '../../src/setup/hook-handlers.js';
import type { JsonObject } from '../../src/setup/json-edit.js';
import { OPENCODE_PLUGIN_FILE } from '../../src/setup/opencode-plugin-file.js';
import { CLI } from '../lib/daemon.js';
import { timeCommandOk } from '../lib/timed-command.js';

/**
 * Runs the built `pulse setup <agent> --write -p <project> --port <port> [args…]` and reads back
 * the handler it wrote for `event`, so the bench measures what users get. Throws unless it is a
 * pulse hook by `transport` (a machine without curl gets `node` hooks, which this bench does not
 * time as curl).
 */
export const setUpHook = async (
  agent: HookAgent,
  event: string,
  transport: HookTransport,
  { project, port, args = [] }: { project: string; port: number; args?: string[] },
): Promise<JsonObject> => {
  await timeCommandOk(process.execPath, [
    CLI,
    'setup',
    agent,
    '--write',
    '-p',
    project,
    '--port',
    String(port),
    ...args,
  ]);
  const place = setupDialectOf(agent).hooks!;
  if (!('layout' in place))
    throw new Error(`${agent} takes pulse's hooks as a plugin, not as handlers in a file`);
  const file = join(project, place.file);
  const doc = JSON.parse(await readFile(file, 'utf8')) as { hooks?: Record<string, unknown[]> };
  const handler = place.layout
    .handlers(doc.hooks?.[event] ?? [])
    .find((candidate) => findPulseHook(agent, event, candidate) !== null);
  if (handler === undefined)
    throw new Error(`pulse setup ${agent} wrote no pulse hook for ${event} in ${file}`);
  const found = findPulseHook(agent, event, handler)!.transport;
  if (found !== transport)
    throw new Error(
      `pulse setup ${agent} ${args.join(' ')} wrote a ${found} hook for ${event}, not ${transport}`,
    );
  return handler;
};

/** An opencode plugin hook: it resolves to let the call go, and throws to hold it. */
export type PluginHook = (input: unknown, output: unknown) => Promise<void>;

/**
 * Runs the built `pulse setup opencode --write` and loads the plugin it wrote as opencode does (its
 * one export called with opencode's context; opencode's client stubbed, since a held call asks
 * nothing of it); resolves with its `tool.execute.before`. The copy at `moduleFile` (`.mjs`, which
 * Node loads as an ES module) is what is loaded.
 */
export const setUpOpencodePlugin = async (
  { project, port }: { project: string; port: number },
  moduleFile: string,
): Promise<PluginHook> => {
  await timeCommandOk(process.execPath, [
    CLI,
    'setup',
    'opencode',
    '--write',
    '-p',
    project,
    '--port',
    String(port),
  ]);
  await copyFile(join(project, OPENCODE_PLUGIN_FILE), moduleFile);
  const { PulsePlugin } = (await import(pathToFileURL(moduleFile).href)) as {
    PulsePlugin: (context: object) => Promise<Record<string, PluginHook>>;
  };
  const nothing = async () => ({});
  const client = { tui: { showToast: nothing }, app: { log: nothing }, session: { prompt: nothing } };
  const hooks = await PulsePlugin({ client, directory: project, worktree: project });
  return hooks['tool.execute.before']!;
};

/** A header value with `$VAR` / `${VAR}` of `allowed` taken from the environment (empty when unset), as Claude Code fills it. */
const interpolate = (value: string, allowed: readonly string[]) =>
  value.replace(/\$\{?(\w+)\}?/g, (_, name: string) =>
    allowed.includes(name) ? (process.env[name] ?? '') : '',
  );

/**
 * Posts `body` to an HTTP hook handler (`{ type: "http", url, headers, allowedEnvVars }`) the way
 * Claude Code does, over a fresh connection; resolves with the wall time to the end of the answer.
 */
export const postHook = (handler: JsonObject, body: string): Promise<{ ms: number; answer: string }> =>
  new Promise((resolve, reject) => {
    const allowed = (handler.allowedEnvVars as string[] | undefined) ?? [];
    const headers = Object.fromEntries(
      Object.entries((handler.headers as Record<string, string> | undefined) ?? {}).map(([name, value]) => [
        name,
        interpolate(value, allowed),
      ]),
    );
    const started = performance.now();
    const post = request(
      handler.url as string,
      {
        method: 'POST',
        // A new connection per call, closed after it: a hook is one request, not a kept-alive client.
        agent: false,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        let answer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          answer += chunk;
        });
        response.once('end', () => {
          const ms = performance.now() - started;
          if (response.statusCode !== 200)
            reject(new Error(`POST ${handler.url} answered ${response.statusCode}: ${answer}`));
          else resolve({ ms, answer });
        });
      },
    );
    post.once('error', reject);
    post.end(body);
  });
