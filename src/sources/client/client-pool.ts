import type { ServerConfig } from '../config/config.js';
import type { ConnectionOptions, ListedTool, ServerConnection } from './server-connection.js';
import { SourceCallError } from './source-call-error.js';

// The SDK's client and transports are loaded on the first call: a daemon without sources never
// needs them, and holds about 1 MB less for it (docs/benchmarks.md, idle).
let connectionModule: Promise<typeof import('./server-connection.js')> | null = null;
const loadConnectionModule = () => {
  connectionModule ??= import('./server-connection.js');
  return connectionModule;
};

/** Where the pool reports stderr lines and log lines, for every server. */
export type ClientPoolOptions = ConnectionOptions;

/**
 * One MCP client per configured server, shared by all its sources. Clients connect on first
 * use; a client that times out or loses its connection is dropped, so the next call starts afresh.
 */
export class ClientPool {
  #servers: Record<string, ServerConfig>;
  #options: ClientPoolOptions;
  #connections = new Map<string, ServerConnection>();
  #closing = new Set<Promise<void>>();
  /** Worn connections still waiting for an answer, closed once it is in (or by `close`). */
  #retiring = new Map<ServerConnection, string>();
  #closed = false;

  constructor(servers: Record<string, ServerConfig>, options: ClientPoolOptions = {}) {
    this.#servers = { ...servers };
    this.#options = options;
  }

  /** Calls a tool and returns the raw CallToolResult; the server's timeout bounds connect and call. */
  callTool(server: string, tool: string, args: Record<string, unknown>): Promise<unknown> {
    return this.#use(server, (connection) => connection.callTool(tool, args));
  }

  /** How the server lists a tool (`tools/list`, kept per connection): whether it is there, and its annotations. */
  listedTool(server: string, tool: string): Promise<ListedTool> {
    return this.#use(server, (connection) => connection.listedTool(tool));
  }

  /** Runs one request on the server's connection; one that timed out or lost it is dropped, so the next starts afresh. */
  async #use<T>(server: string, request: (connection: ServerConnection) => Promise<T>): Promise<T> {
    const { ServerConnection } = await loadConnectionModule();
    const connection = this.#connectionFor(server, ServerConnection);
    try {
      const result = await request(connection);
      if (connection.worn) this.#retire(server, connection);
      return result;
    } catch (error) {
      const failure = error as SourceCallError;
      if (failure.reason !== 'call') this.#drop(server, connection, failure.reason !== 'closed');
      else if (connection.worn) this.#retire(server, connection);
      throw failure;
    }
  }

  /** A worn connection takes no new request and closes once its last answer is in; the next call connects afresh. */
  #retire(server: string, connection: ServerConnection): void {
    if (this.#connections.get(server) === connection) this.#connections.delete(server);
    if (connection.idle) void this.#drop(server, connection, false);
    else this.#retiring.set(connection, server);
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
    for (const [connection, name] of this.#retiring) this.#drop(name, connection, true);
    await Promise.allSettled([...this.#closing]);
  }

  #configOf(server: string): ServerConfig | undefined {
    return Object.hasOwn(this.#servers, server) ? this.#servers[server] : undefined;
  }

  #connectionFor(server: string, Connection: typeof ServerConnection): ServerConnection {
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
    const connection: ServerConnection = new Connection(server, config, this.#options, () =>
      this.#drop(server, connection, false),
    );
    this.#connections.set(server, connection);
    return connection;
  }

  #drop(server: string, connection: ServerConnection, force: boolean): Promise<void> {
    if (this.#connections.get(server) === connection) this.#connections.delete(server);
    this.#retiring.delete(connection);
    const closing = connection.shutdown(force, this.#options.onLog);
    this.#closing.add(closing);
    void closing.finally(() => this.#closing.delete(closing));
    return closing;
  }
}
