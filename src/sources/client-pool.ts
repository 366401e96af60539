import { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../version.js';
import type { ServerConfig } from './config.js';

/** Why a call failed: no answer in time, no connection, an error answer, or a connection lost. */
export type SourceCallFailure = 'timeout' | 'connect' | 'call' | 'closed';

/** A tool call on a source server failed; `message` says what happened and what to check. */
export class SourceCallError extends Error {
  override name = 'SourceCallError';
  readonly server: string;
  readonly reason: SourceCallFailure;

  constructor(
    message: string,
    { server, reason, cause }: { server: string; reason: SourceCallFailure; cause?: unknown },
  ) {
    super(message, { cause });
    this.server = server;
    this.reason = reason;
  }
}

export interface ClientPoolOptions {
  /** One line of a stdio server's stderr, cut to 2,000 characters. */
  onStderr?: (server: string, line: string) => void;
  /** Something worth a log line that fails no call. */
  onLog?: (message: string) => void;
}

const MAX_STDERR_LINE = 2_000;
/** How long to wait for a child to exit before the next, harder signal. */
const EXIT_GRACE_MS = 2_000;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
const seconds = (ms: number) => `${ms / 1000} s`;
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Remembers the pid at spawn: the SDK forgets it as soon as a close starts, before the child is gone. */
class StdioTransport extends StdioClientTransport {
  spawnedPid: number | null = null;

  override async start(): Promise<void> {
    await super.start();
    this.spawnedPid = this.pid;
  }
}

/** Splits a stream into lines cut to a bounded length: a flooding child can neither block nor bloat us. */
const forwardLines = (stream: Readable, emit: (line: string) => void) => {
  let line = '';
  let cut = false;
  const flush = () => {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (text !== '') emit(cut ? `${text}…` : text);
    line = '';
    cut = false;
  };
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    for (const [index, part] of chunk.split('\n').entries()) {
      if (index > 0) flush();
      if (cut) continue;
      line += part;
      if (line.length > MAX_STDERR_LINE) {
        line = line.slice(0, MAX_STDERR_LINE);
        cut = true;
      }
    }
  });
  stream.on('end', flush);
  stream.on('error', () => {});
};

const whereOf = (config: ServerConfig) => {
  if (config.kind === 'stdio') return `stdio: ${config.command}`;
  const url = new URL(config.url);
  return `http: ${url.origin}${url.pathname}`;
};

const whatToCheck = (config: ServerConfig) =>
  config.kind === 'stdio' ? 'check its command, args, env and cwd' : 'check its url and headers';

const isTimeout = (error: unknown) => error instanceof McpError && error.code === ErrorCode.RequestTimeout;

/** An error answer from a live server; anything else means the connection can no longer be trusted. */
const isAnswer = (error: unknown) =>
  error instanceof McpError && error.code !== ErrorCode.ConnectionClosed && !isTimeout(error);

/** One client for one server config, from spawn or first request to the child's exit. */
class Connection {
  readonly key: string;
  readonly client = new Client({ name: 'pulse', version: VERSION });
  readonly ready: Promise<Client>;
  #transport: StdioTransport | StreamableHTTPClientTransport;
  #ended = false;
  #onEnded = () => {};
  #exited = new Promise<void>((resolve) => {
    this.#onEnded = resolve;
  });
  #shutdown: Promise<void> | undefined;
  #lastStderr = '';

  constructor(
    readonly name: string,
    readonly config: ServerConfig,
    options: ClientPoolOptions,
    onLost: () => void,
  ) {
    this.key = JSON.stringify(config);
    this.#transport = this.#createTransport(options);
    this.client.onclose = () => {
      this.#ended = true;
      this.#onEnded();
      onLost();
    };
    this.client.onerror = (error) => options.onLog?.(`server "${name}": ${messageOf(error)}`);
    this.ready = this.#connect();
  }

  #createTransport({ onStderr }: ClientPoolOptions) {
    const { config } = this;
    if (config.kind === 'http') {
      return new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers },
      });
    }
    const transport = new StdioTransport({
      command: config.command,
      args: config.args,
      env: { ...getDefaultEnvironment(), ...config.env },
      cwd: config.cwd,
      stderr: 'pipe',
    });
    // Always drained: an unread pipe fills up and blocks the child's writes, answers included.
    if (transport.stderr instanceof Readable) {
      forwardLines(transport.stderr, (line) => {
        this.#lastStderr = line;
        onStderr?.(this.name, line);
      });
    }
    return transport;
  }

  async #connect(): Promise<Client> {
    const { name, config } = this;
    const controller = new AbortController();
    // The SDK's timeout covers the initialize request only, not the spawn or the initialized notification.
    const deadline = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason));
    });
    const timer = setTimeout(() => controller.abort(), config.timeoutMs);
    try {
      await Promise.race([
        this.client.connect(this.#transport, { timeout: config.timeoutMs, signal: controller.signal }),
        deadline,
      ]);
      return this.client;
    } catch (error) {
      if (controller.signal.aborted || isTimeout(error)) {
        throw new SourceCallError(
          `server "${name}" did not connect within ${seconds(config.timeoutMs)} (timeout_sec); it is skipped until it recovers`,
          { server: name, reason: 'timeout', cause: error },
        );
      }
      const closed = error instanceof McpError && error.code === ErrorCode.ConnectionClosed;
      const what = closed ? 'it closed the connection before the MCP handshake ended' : messageOf(error);
      const stderr = this.#lastStderr ? `; its last stderr line: ${this.#lastStderr}` : '';
      throw new SourceCallError(
        `server "${name}" failed to connect (${whereOf(config)}): ${what}${stderr}; ${whatToCheck(config)}`,
        { server: name, reason: 'connect', cause: error },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** Calls a tool; a failure is a SourceCallError whose reason says whether the connection is still good. */
  async callTool(tool: string, args: Record<string, unknown>): Promise<unknown> {
    const { name, config } = this;
    const client = await this.ready;
    const controller = new AbortController();
    // Our own controller, cleared after the answer: the SDK keeps listening to the signal, and an
    // abort after the answer would still send the server a cancellation.
    const timer = setTimeout(() => controller.abort(), config.timeoutMs);
    try {
      return await client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: config.timeoutMs,
        signal: controller.signal,
      });
    } catch (error) {
      if (controller.signal.aborted || isTimeout(error)) {
        throw new SourceCallError(
          `server "${name}" did not answer "${tool}" within ${seconds(config.timeoutMs)} (timeout_sec); it is skipped until it recovers`,
          { server: name, reason: 'timeout', cause: error },
        );
      }
      if (isAnswer(error)) {
        throw new SourceCallError(`server "${name}" answered "${tool}" with an error: ${messageOf(error)}`, {
          server: name,
          reason: 'call',
          cause: error,
        });
      }
      throw new SourceCallError(
        `server "${name}" lost the connection during "${tool}": ${messageOf(error)}; it is reconnected on the next call`,
        { server: name, reason: 'closed', cause: error },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the client and waits for a stdio child to exit; `force` signals the child at once. */
  shutdown(force: boolean, onLog?: (message: string) => void): Promise<void> {
    this.#shutdown ??= (async () => {
      const pid = this.#transport instanceof StdioTransport ? this.#transport.spawnedPid : null;
      if (force) this.#signal(pid, 'SIGTERM');
      try {
        await this.client.close();
      } catch (error) {
        onLog?.(`server "${this.name}": closing failed: ${messageOf(error)}`);
      }
      if (pid === null) return;
      await Promise.race([this.#exited, delay(EXIT_GRACE_MS)]);
      if (this.#ended) return;
      this.#signal(pid, 'SIGKILL');
      await Promise.race([this.#exited, delay(EXIT_GRACE_MS)]);
      if (!this.#ended) onLog?.(`server "${this.name}": child ${pid} did not exit after SIGKILL`);
    })();
    return this.#shutdown;
  }

  #signal(pid: number | null, signal: NodeJS.Signals) {
    if (pid === null || this.#ended) return;
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/**
 * One MCP client per configured server, shared by all its sources. Clients connect on first
 * use; a client that times out or loses its connection is dropped, so the next call starts afresh.
 */
export class ClientPool {
  #servers: Record<string, ServerConfig>;
  #options: ClientPoolOptions;
  #connections = new Map<string, Connection>();
  #closing = new Set<Promise<void>>();
  #closed = false;

  constructor(servers: Record<string, ServerConfig>, options: ClientPoolOptions = {}) {
    this.#servers = { ...servers };
    this.#options = options;
  }

  /** Calls a tool and returns the raw CallToolResult; the server's timeout bounds connect and call. */
  async callTool(server: string, tool: string, args: Record<string, unknown>): Promise<unknown> {
    const connection = this.#connectionFor(server);
    try {
      return await connection.callTool(tool, args);
    } catch (error) {
      const failure = error as SourceCallError;
      if (failure.reason !== 'call') this.#drop(server, connection, failure.reason !== 'closed');
      throw failure;
    }
  }

  /** Takes a new set of servers: clients whose config changed or went away are closed, the others kept. */
  async update(servers: Record<string, ServerConfig>): Promise<void> {
    this.#servers = { ...servers };
    const closing: Promise<void>[] = [];
    for (const [name, connection] of this.#connections) {
      const next = this.#configOf(name);
      if (next === undefined || JSON.stringify(next) !== connection.key) {
        closing.push(this.#drop(name, connection, false));
      }
    }
    await Promise.all(closing);
  }

  /** Closes every client and waits until every stdio child has exited. */
  async close(): Promise<void> {
    this.#closed = true;
    // Signalled at once: the SDK waits 2 s after closing stdin before it signals, and the daemon's
    // whole shutdown gets 2 s, so a busy child would outlive it.
    for (const [name, connection] of this.#connections) this.#drop(name, connection, true);
    await Promise.allSettled([...this.#closing]);
  }

  #configOf(server: string): ServerConfig | undefined {
    return Object.hasOwn(this.#servers, server) ? this.#servers[server] : undefined;
  }

  #connectionFor(server: string): Connection {
    if (this.#closed) {
      throw new SourceCallError(`server "${server}" cannot be called: the client pool is closed`, {
        server,
        reason: 'closed',
      });
    }
    const existing = this.#connections.get(server);
    if (existing) return existing;
    const config = this.#configOf(server);
    if (config === undefined) {
      const known = Object.keys(this.#servers).join(', ') || 'none';
      throw new SourceCallError(`no server "${server}" is configured; known servers: ${known}`, {
        server,
        reason: 'call',
      });
    }
    const connection: Connection = new Connection(server, config, this.#options, () =>
      this.#drop(server, connection, false),
    );
    this.#connections.set(server, connection);
    return connection;
  }

  #drop(server: string, connection: Connection, force: boolean): Promise<void> {
    if (this.#connections.get(server) === connection) this.#connections.delete(server);
    const closing = connection.shutdown(force, this.#options.onLog);
    this.#closing.add(closing);
    void closing.finally(() => this.#closing.delete(closing));
    return closing;
  }
}
