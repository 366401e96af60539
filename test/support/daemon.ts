import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runNode } from './processes.js';

/** The bundled `pulse` CLI, as the package ships it, which the tests run as a user does. */
export const CLI = fileURLToPath(new URL('../../dist/bundle/pulse.mjs', import.meta.url));

/** The bundled `pulse` bin: the CommonJS entry that `pulse setup` points agents' hooks at. */
export const BIN = fileURLToPath(new URL('../../dist/bundle/bin.cjs', import.meta.url));

/**
 * The tests' `pulse` on PATH, a link to the bundled bin as `npm install -g` makes one: the CLI
 * then prints its hints as `pulse …`, the way a user who installed it reads them.
 */
export const PULSE_BIN_DIR = join(
  tmpdir(),
  `pulse-test-bin-${createHash('sha256').update(BIN).digest('hex').slice(0, 12)}`,
);
mkdirSync(PULSE_BIN_DIR, { recursive: true });
try {
  symlinkSync(BIN, join(PULSE_BIN_DIR, 'pulse'));
} catch (error) {
  if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
}
if (!process.env.PATH?.split(delimiter).includes(PULSE_BIN_DIR))
  process.env.PATH = `${PULSE_BIN_DIR}${delimiter}${process.env.PATH ?? ''}`;

/** A fresh project folder in the system temp dir. */
export const tempProject = (prefix = 'pulse-test-'): Promise<string> => mkdtemp(join(tmpdir(), prefix));

/** Removes a project folder and everything in it. */
export const removeProject = (dir: string) => rm(dir, { recursive: true, force: true });

/** A `pulse start` child process serving a project, as `startDaemon` returns it. */
export interface RunningDaemon {
  project: string;
  url: string;
  port: number;
  process: ChildProcess;
  /** Everything the daemon printed so far. */
  output(): string;
  /** SIGTERM, and wait for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL, as a crash would. */
  kill9(): Promise<void>;
}

/** Runs the CLI as a child process (with `input` on its stdin) and returns what it printed and how it exited. */
export const runCli = (
  args: string[],
  options: { timeoutMs?: number; env?: Record<string, string>; input?: string } = {},
) => runNode(CLI, args, options);

/** `pulse setup AGENT --autostart --write -p PROJECT --port PORT`, which must succeed; what it printed. */
export const setupWithAutostart = async (agent: string, project: string, port: number): Promise<string> => {
  const setup = await runCli([
    'setup',
    agent,
    '--autostart',
    '--write',
    '-p',
    project,
    '--port',
    String(port),
  ]);
  if (setup.code !== 0)
    throw new Error(`pulse setup ${agent} --autostart failed:\n${setup.stdout}\n${setup.stderr}`);
  return setup.stdout;
};

/**
 * Starts `pulse start` on a project the way a user does (a child process on an ephemeral
 * port) and resolves once it prints its MCP endpoint.
 */
export const startDaemon = async (
  project: string,
  {
    args = [],
    env = {},
    prefix = [],
  }: {
    args?: string[];
    env?: Record<string, string>;
    /** A command that runs the daemon's own (e.g. `unshare … sh -c '…; exec "$@"' sh`), execing it in the same process. */
    prefix?: string[];
  } = {},
): Promise<RunningDaemon> => {
  const command = [...prefix, process.execPath, CLI, 'start', '--project', project, '--port', '0', ...args];
  const child = spawn(command[0]!, command.slice(1), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (data: Buffer) => {
      output += data;
      const match = /MCP endpoint: (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (data) => {
      output += data;
    });
    child.on('exit', (code) =>
      reject(new Error(`pulse start exited with ${code} before serving:\n${output}`)),
    );
    setTimeout(
      () => reject(new Error(`pulse start printed no endpoint within 15 s:\n${output}`)),
      15_000,
    ).unref();
  });
  return {
    project,
    url,
    port: Number(new URL(url).port),
    process: child,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
    async kill9() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
};

/** A session client (initialize, then Mcp-Session-Id), as Claude Code or the Inspector connect, named by `clientInfo`. */
export const connectClient = async (
  url: string,
  clientInfo: { name: string; version: string } = { name: 'pulse-test', version: '1.0.0' },
): Promise<Client> => {
  const client = new Client(clientInfo);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
};

/**
 * A session client on the legacy SDK line (`@modelcontextprotocol/sdk` 1.x, initialize on
 * 2025-11-25), as agents built on the old SDK connect; with the transport, to read what it negotiated.
 */
export const connectLegacyClient = async (
  url: string,
  clientInfo: { name: string; version: string } = { name: 'pulse-legacy-test', version: '1.0.0' },
) => {
  const client = new LegacyClient(clientInfo);
  const transport = new LegacyTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
};

/** What `callTool` needs of a client: the v2 client, or the legacy one of `connectLegacyClient`. */
export interface ToolCaller {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<object>;
}

/** Calls a tool and returns its structuredContent, checking that the JSON text says the same. */
export const callTool = async <T = Record<string, unknown>>(
  client: ToolCaller,
  name: string,
  args: Record<string, unknown> = {},
): Promise<T> => {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: unknown;
    structuredContent?: unknown;
  };
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
  const fromText = JSON.parse(text);
  const structured = result.structuredContent;
  if (JSON.stringify(fromText) !== JSON.stringify(structured)) {
    throw new Error(`${name}: JSON text and structuredContent differ`);
  }
  return structured as T;
};

/** The `result` of a JSON-RPC answer, with the fields the tests read of the methods they call. */
export interface RpcResult {
  isError?: boolean;
  content?: Array<{ type: string; text: string }>;
  structuredContent?: Record<string, unknown>;
  tools?: Array<{ name: string }>;
  contents?: Array<{ uri: string; text: string }>;
  messages?: Array<{ role: string; content: { type: string; text: string } }>;
}

/** A JSON-RPC answer: a result, or an error. */
export interface RpcAnswer {
  jsonrpc: string;
  id: number | string | null;
  result?: RpcResult;
  error?: { code: number; message: string; data?: unknown };
}

/** A one-shot JSON-RPC POST with no session and no initialize, as a curl script sends. */
export const oneShot = async (
  url: string,
  method: string,
  params: unknown = {},
  headers: Record<string, string> = {},
): Promise<{ status: number; body: RpcAnswer }> => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: response.status, body: (await response.json()) as RpcAnswer };
};

/**
 * Waits for a file-system effect: checks every `intervalMs` until `check` returns a value
 * other than undefined/false, and fails after `timeoutMs` with `describe()` in the message.
 */
export const waitUntil = async <T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  {
    timeoutMs = 5000,
    intervalMs = 25,
    describe = () => 'condition',
  }: { timeoutMs?: number; intervalMs?: number; describe?: () => string } = {},
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
};

/**
 * Resolves once the daemon's reflection gate has a delivery of external events set aside for the
 * agents (`GET /status`, `gate.delivery`): from then on a hook can tell its titles.
 */
export const waitForDelivery = (daemon: RunningDaemon) =>
  waitUntil(
    async () => {
      const status = (await (await fetch(new URL('/status', daemon.url))).json()) as {
        gate: { delivery: unknown };
      };
      return status.gate.delivery !== null;
    },
    { timeoutMs: 15_000, describe: () => 'a delivery set aside for the agents' },
  );

/** One line of `events.jsonl`, as read back by a test. */
export interface LoggedEvent {
  id: string;
  timestamp: string;
  kind: string;
  path: string;
  sha256: string | null;
  size: number | null;
}

/** The lines of `<project>/.pulse/events.jsonl`, parsed (a line that does not parse throws). */
export const readEvents = async (project: string): Promise<LoggedEvent[]> => {
  const text = await readFile(join(project, '.pulse', 'events.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
};
