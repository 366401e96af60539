import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';

// A tiny MCP server, to see which protocol revision an agent CLI chooses: the v2 SDK's
// createMcpHandler serving both eras on one endpoint, or the v1 SDK's sessionful transport (2025
// only, as pulse's route was before issue 33). Every request is recorded (its JSON-RPC method,
// protocol-version header, session header and _meta) before the SDK answers it.

/** One request an agent sent, as far as era negotiation shows in it. */
export interface EraRequest {
  httpMethod: string;
  /** The JSON-RPC method (`server/discover`, `initialize`, `tools/call`…); each of a batch is one entry. */
  method?: string;
  protocolVersionHeader?: string;
  sessionHeader?: string;
  /** `params.protocolVersion` of an `initialize`. */
  initializeVersion?: string;
  /** `params._meta['io.modelcontextprotocol/protocolVersion']`: the 2026 per-request claim. */
  metaVersion?: string;
  /** `params._meta['io.modelcontextprotocol/clientInfo']`. */
  metaClientInfo?: unknown;
  status?: number;
}

/**
 * Which eras the server serves: both (v2 `createMcpHandler`), or 2025 only on the v1 SDK, sessionful
 * (`server/discover` refused: "Server not initialized") or stateless (refused: "Unsupported protocol
 * version: 2026-07-28"), both with a 400.
 */
export type EraMode = 'both' | 'legacy-only' | 'legacy-stateless';

const readBody = (request: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

const recordsOf = (request: IncomingMessage, body: Buffer): EraRequest[] => {
  const base = {
    httpMethod: request.method ?? '',
    protocolVersionHeader: header(request.headers['mcp-protocol-version']),
    sessionHeader: header(request.headers['mcp-session-id']),
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return [base];
  }
  return (Array.isArray(parsed) ? parsed : [parsed]).map((message) => {
    const params = (message as { params?: Record<string, unknown> })?.params;
    const meta = params?._meta as Record<string, unknown> | undefined;
    return {
      ...base,
      method: (message as { method?: string })?.method,
      initializeVersion: typeof params?.protocolVersion === 'string' ? params.protocolVersion : undefined,
      metaVersion: meta?.['io.modelcontextprotocol/protocolVersion'] as string | undefined,
      metaClientInfo: meta?.['io.modelcontextprotocol/clientInfo'],
    };
  });
};

/** A running era server: its URL (`/mcp`) and what it was sent. */
export interface EraServer {
  url: string;
  requests: EraRequest[];
  close(): Promise<void>;
}

/** The one tool the agent calls, `era_echo`, so a run shows a tools/call on the wire. */
const echo = {
  description: 'Echoes its text.',
  inputSchema: z.object({ text: z.string() }),
};
const echoed = async ({ text }: { text: string }) => ({
  content: [{ type: 'text' as const, text: `echo: ${text}` }],
});

const modernServer = () => {
  const server = new McpServer({ name: 'era-probe', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('era_echo', echo, echoed);
  return server;
};

const v1Server = () => {
  const server = new V1McpServer({ name: 'era-probe', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'era_echo',
    { description: echo.description, inputSchema: { text: z.string() } },
    echoed,
  );
  return server;
};

type FetchHandler = (request: Request, body: unknown) => Promise<Response>;

/**
 * The v1 SDK's sessionful streamable HTTP: `initialize` opens a session; anything else without a
 * known session reaches a transport never initialized, which answers as the v1 SDK does (a 400).
 */
const legacyOnly = (): { fetch: FetchHandler; close(): Promise<void> } => {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  return {
    fetch: async (request, body) => {
      const id = request.headers.get('mcp-session-id');
      const open = id === null ? undefined : sessions.get(id);
      if (open !== undefined) return open.handleRequest(request, { parsedBody: body });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
      });
      const server = new V1McpServer(
        { name: 'era-probe', version: '1.0.0' },
        { capabilities: { tools: {} } },
      );
      server.registerTool(
        'era_echo',
        { description: echo.description, inputSchema: { text: z.string() } },
        echoed,
      );
      await server.connect(transport);
      return transport.handleRequest(request, { parsedBody: body });
    },
    close: async () => {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
    },
  };
};

/** The v1 SDK's stateless streamable HTTP: a fresh server per request, never a session. */
const legacyStateless = (): { fetch: FetchHandler; close(): Promise<void> } => ({
  fetch: async (request, body) => {
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await v1Server().connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  },
  close: async () => {},
});

const bothEras = (): { fetch: FetchHandler; close(): Promise<void> } => {
  const handler = createMcpHandler(modernServer, { legacy: 'stateless' });
  return { fetch: (request) => handler.fetch(request), close: () => handler.close() };
};

/** Starts the era server on an ephemeral 127.0.0.1 port. */
export const startEraServer = async (mode: EraMode): Promise<EraServer> => {
  const handler = mode === 'both' ? bothEras() : mode === 'legacy-only' ? legacyOnly() : legacyStateless();
  const requests: EraRequest[] = [];
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    const records = recordsOf(request, body);
    requests.push(...records);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'DELETE';
    let parsed: unknown;
    try {
      parsed = hasBody ? JSON.parse(body.toString('utf8')) : undefined;
    } catch {
      parsed = undefined;
    }
    const answer = await handler.fetch(
      new Request(`http://127.0.0.1${request.url}`, {
        method: request.method,
        headers,
        body: hasBody ? new Uint8Array(body) : undefined,
      }),
      parsed,
    );
    for (const record of records) record.status = answer.status;
    response.writeHead(answer.status, Object.fromEntries(answer.headers));
    if (answer.body === null) return void response.end();
    const reader = answer.body.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      response.write(chunk.value);
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        void handler.close();
      }),
  };
};
