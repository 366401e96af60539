import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { errorMessage } from '../../../machines/error-message.js';
import { VERSION } from '../../package/version.js';
import type { ServerConfig } from '../config/config.js';
import { boundedFetch } from './bounded-fetch.js';
import { callFailure, connectFailure } from './call-failures.js';
import { forwardLines } from './forward-lines.js';
import { StdioTransport } from './stdio-transport.js';

/** Where a connection reports what is not a failed call. */
export interface ConnectionOptions {
  /** One line of a stdio server's stderr, cut to 2,000 characters. */
  onStderr?: (server: string, line: string) => void;
  /** Something worth a log line that fails no call. */
  onLog?: (message: string) => void;
}

/** At most this many pages of `tools/list` are read (a page is usually every tool). */
const MAX_TOOL_PAGES = 50;

/**
 * Requests a 2026-07-28 HTTP connection serves before the pool replaces it. The SDK joins each such
 * request's signal to the transport's with `AbortSignal.any`, and Node keeps about 50 bytes of every
 * join on the transport's signal for as long as it lives (nodejs/node#55351, unfixed on Node 20):
 * a source polled each second would grow the daemon by megabytes a day.
 */
export const MODERN_HTTP_REQUESTS = 1000;

/** A tool as the server lists it: whether it is there, its annotations, and the names listed (for an error). */
export interface ListedTool {
  listed: boolean;
  annotations: unknown;
  names: string[];
}

/** One client for one server config, from spawn or first request to the child's exit. */
export class ServerConnection {
  readonly key: string;
  readonly client: Client;
  readonly ready: Promise<Client>;
  #transport: StdioTransport | StreamableHTTPClientTransport;
  #shutdown: Promise<void> | undefined;
  #lastStderr = '';
  /** The server's tools by name, with their annotations: read once, again after it says the list changed. */
  #tools: Promise<Map<string, unknown>> | null = null;
  /** Requests sent on this connection, and those not answered yet. */
  #sent = 0;
  #inFlight = 0;

  constructor(
    readonly name: string,
    readonly config: ServerConfig,
    options: ConnectionOptions,
    onLost: () => void,
  ) {
    this.key = JSON.stringify(config);
    this.client = new Client(
      { name: 'pulse', version: VERSION },
      {
        listMaxPages: MAX_TOOL_PAGES,
        // HTTP probes `server/discover` and speaks 2026-07-28 where served; stdio keeps `initialize`,
        // since a probe on our one child kills servers that exit on it (rmcp) and the SDK's way out spawns the command twice.
        versionNegotiation: { mode: config.kind === 'http' ? 'auto' : 'legacy' },
      },
    );
    this.#transport = this.#createTransport(options);
    this.client.onclose = onLost;
    this.client.onerror = (error) => options.onLog?.(`server "${name}": ${errorMessage(error)}`);
    this.client.setNotificationHandler('notifications/tools/list_changed', async () => {
      this.#tools = null;
    });
    this.ready = this.#connect();
  }

  #createTransport({ onStderr }: ConnectionOptions) {
    const { config } = this;
    if (config.kind === 'http') {
      return new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers },
        fetch: boundedFetch(),
      });
    }
    const transport = new StdioTransport({
      command: config.command,
      args: config.args,
      env: { ...getDefaultEnvironment(), ...config.env },
      cwd: config.cwd,
    });
    // Always drained: an unread pipe fills up and blocks the child's writes, answers included.
    forwardLines(transport.stderr, (line) => {
      this.#lastStderr = line;
      onStderr?.(this.name, line);
    });
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
      throw connectFailure(name, config, error, {
        aborted: controller.signal.aborted,
        lastStderr: this.#lastStderr,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Whether the pool should replace this connection (`MODERN_HTTP_REQUESTS`): a 2025-era or stdio one is never worn. */
  get worn(): boolean {
    return (
      this.#sent >= MODERN_HTTP_REQUESTS &&
      this.config.kind === 'http' &&
      this.client.getProtocolEra() === 'modern'
    );
  }

  /** Whether no request is waiting for its answer. */
  get idle(): boolean {
    return this.#inFlight === 0;
  }

  /** Calls a tool; a failure is a SourceCallError whose reason says whether the connection is still good. */
  callTool(tool: string, args: Record<string, unknown>): Promise<unknown> {
    return this.#request(tool, (client, options) =>
      client.callTool({ name: tool, arguments: args }, options),
    );
  }

  /**
   * How the server lists `tool` in `tools/list` (every page): on 2025 read once per connection, again
   * after `notifications/tools/list_changed` or a miss; on 2026-07-28 read each time, the SDK's
   * response cache keeping it only as long as the server's cache hint says.
   */
  async listedTool(tool: string): Promise<ListedTool> {
    // A 2026 connection hears no list change without a listen stream: the server's hint bounds staleness instead.
    if (this.client.getProtocolEra() === 'modern') this.#tools = null;
    this.#tools ??= this.#listTools().catch((error: unknown) => {
      this.#tools = null;
      throw error;
    });
    const tools = await this.#tools;
    // A tool not listed is looked for anew at the next poll: a server may add it without saying its list changed.
    if (!tools.has(tool)) this.#tools = null;
    return { listed: tools.has(tool), annotations: tools.get(tool) ?? null, names: [...tools.keys()] };
  }

  async #listTools(): Promise<Map<string, unknown>> {
    // Without a cursor the SDK walks every page, up to MAX_TOOL_PAGES.
    const result = await this.#request('tools/list', (client, options) =>
      client.listTools(undefined, options),
    );
    return new Map(result.tools.map((tool) => [tool.name, tool.annotations ?? null]));
  }

  /** One request on the connected client within the server's timeout; `what` names it in the failure. */
  async #request<T>(
    what: string,
    send: (client: Client, options: { timeout: number; signal: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    const { name, config } = this;
    this.#sent++;
    this.#inFlight++;
    try {
      const client = await this.ready;
      const controller = new AbortController();
      // Our own controller, cleared after the answer: the SDK keeps listening to the signal, and an
      // abort after the answer would still send the server a cancellation.
      const timer = setTimeout(() => controller.abort(), config.timeoutMs);
      try {
        return await send(client, { timeout: config.timeoutMs, signal: controller.signal });
      } catch (error) {
        throw callFailure(name, config, what, error, { aborted: controller.signal.aborted });
      } finally {
        clearTimeout(timer);
      }
    } finally {
      this.#inFlight--;
    }
  }

  /** Closes the client and waits until a stdio server's process group has exited; `force` signals it at once. */
  shutdown(force: boolean, onLog?: (message: string) => void): Promise<void> {
    this.#shutdown ??= (async () => {
      // Started first, so that the client's own close joins this one rather than the gentle one.
      const ended = this.#transport instanceof StdioTransport ? this.#transport.close(force) : null;
      try {
        await this.client.close();
      } catch (error) {
        onLog?.(`server "${this.name}": closing failed: ${errorMessage(error)}`);
      }
      await ended;
    })();
    return this.#shutdown;
  }
}
