import { randomUUID } from 'node:crypto';
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  type McpHttpHandler,
  type McpServer,
  type ServerNotifier,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { Context } from 'hono';
import {
  createSessionTable,
  SESSION_DEFAULTS,
  type SessionFacts,
  type SessionLimits,
} from '../system/session-table.js';
import { shapeProblem } from './rpc-shape.js';
import { onStreamEnd } from './stream-end.js';

/**
 * Bodies above this are refused with 413 before parsing. Ours, not the SDK's body parser: its
 * limit is 4 MiB, and it reads through a cloned stream where `text()` reads the socket directly.
 */
export const MAX_BODY_BYTES = 1024 * 1024;

const rpcError = (status: number, code: number, message: string, id: string | number | null = null) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }), {
    status,
    headers: { 'content-type': 'application/json' },
  });

interface Session {
  /** The project whose endpoint opened it: it is served there only. */
  project: string;
  transport: WebStandardStreamableHTTPServerTransport;
  close(): Promise<void>;
}

const readLimited = async (request: Request): Promise<string | null> => {
  const length = request.headers.get('content-length');
  const declared = Number(length ?? '0');
  if (declared > MAX_BODY_BYTES) return null;
  // With a declared length the HTTP parser stops the body there, so no limit needs counting; and
  // text() lets @hono/node-server read the socket directly, where touching `body` would build a
  // whole web Request and stream first (a third of this route's time per call).
  if (length !== null) return request.text();
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
};

const acceptsStream = (request: Request): boolean => {
  const accept = request.headers.get('accept') ?? '';
  return accept.includes('application/json') && accept.includes('text/event-stream');
};

const withAccept = (request: Request): Request => {
  if (acceptsStream(request)) return request;
  // One-shot scripts (curl) often send no Accept at all; they get a JSON answer either way.
  const headers = new Headers(request.headers);
  headers.set('accept', 'application/json, text/event-stream');
  return new Request(request.url, { method: request.method, headers });
};

const messagesOf = (body: unknown): unknown[] => (Array.isArray(body) ? body : [body]);

/** Whether 2026-07-28 is served: on unless `PULSE_MCP_2026=0` makes every client fall back to 2025-11-25. */
const modernServed = (): boolean => process.env.PULSE_MCP_2026 !== '0';

/** The answer a 2025-only server gives a 2026-07-28 request: clients fall back to `initialize` on it. */
const modernRefused = (request: Request): Response =>
  new Response(
    JSON.stringify({
      jsonrpc: '2.0',
      error: {
        code: -32022,
        message: `Unsupported protocol version: ${request.headers.get('mcp-protocol-version') ?? '2026-07-28'}`,
        data: { supported: SUPPORTED_PROTOCOL_VERSIONS },
      },
      id: null,
    }),
    { status: 400, headers: { 'content-type': 'application/json' } },
  );

const stringField = (value: unknown, key: string): string | undefined => {
  const field = (value as Record<string, unknown> | null | undefined)?.[key];
  return typeof field === 'string' ? field.slice(0, 200) : undefined;
};

/** The `clientInfo` an initialize request names its client by. */
const clientOf = (body: unknown): SessionFacts['client'] => {
  const info = (messagesOf(body).find((m) => isInitializeRequest(m)) as { params?: { clientInfo?: unknown } })
    ?.params?.clientInfo;
  const name = stringField(info, 'name');
  return name === undefined ? null : { name, version: stringField(info, 'version') ?? '' };
};

/** The `agent` argument of a tool call in the request, if one gives it. */
const agentNamed = (body: unknown): string | undefined => {
  for (const message of messagesOf(body)) {
    const m = message as { method?: unknown; params?: { arguments?: unknown } } | null;
    const agent = m?.method === 'tools/call' ? stringField(m.params?.arguments, 'agent') : undefined;
    if (agent !== undefined) return agent;
  }
  return undefined;
};

/** The `/mcp` endpoint: its handler, the sessions it holds, and how to close them all. */
export type McpRoute = ReturnType<typeof createMcpRoute>;

/** The servers the endpoint answers with, on a project's own actors. */
export interface McpServers {
  /** A server for one 2025-era session or one-shot request. */
  legacy(project: string): McpServer;
  /** A server for one 2026-07-28 request: built per request, so it holds nothing between them. */
  modern(project: string): McpServer;
  /** Starts the project's one watch that tells its `subscriptions/listen` streams what changed; returns its stop. */
  watch(project: string, notify: ServerNotifier): () => void;
}

/** One project's 2026-07-28 handler and the watch that publishes to its listeners. */
interface ModernLeg {
  handler: McpHttpHandler;
  stopWatch: () => void;
}

/**
 * The MCP endpoint of every project (`/p/<id>/mcp`, and `/mcp` while one is served) for both kinds of client: session clients (`initialize`, then
 * `Mcp-Session-Id`) and one-shot JSON-RPC POSTs without a session, served statelessly as
 * PulseAgent does. Sessions idle past `limits.idleMs` are closed, and so is the least recently
 * used idle one when a new one would pass `limits.maxSessions`; either then gets 404, on which
 * clients initialize again.
 */
export const createMcpRoute = (
  servers: McpServers,
  limits: SessionLimits = SESSION_DEFAULTS,
  /** Called whenever a session comes, goes, or is used. */
  onSessionsChange?: () => void,
) => {
  const sessions = createSessionTable<Session>(limits, onSessionsChange);
  const createServer = servers.legacy;
  const modernLegs = new Map<string, ModernLeg>();

  /** The project's 2026 handler, made at its first 2026 request: one per project, whatever the number of callers. */
  const modernLeg = (project: string): ModernLeg => {
    let leg = modernLegs.get(project);
    if (leg === undefined) {
      const handler = createMcpHandler(() => servers.modern(project), { legacy: 'reject' });
      leg = { handler, stopWatch: servers.watch(project, handler.notify) };
      modernLegs.set(project, leg);
    }
    return leg;
  };

  const closeModern = async (project?: string): Promise<void> => {
    const closing = [...modernLegs].filter(([id]) => project === undefined || id === project);
    for (const [id, leg] of closing) {
      modernLegs.delete(id);
      leg.stopWatch();
    }
    await Promise.allSettled(closing.map(([, leg]) => leg.handler.close()));
  };

  const serveOneShot = async (project: string, request: Request, body: unknown): Promise<Response> => {
    const server = createServer(project);
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(withAccept(request), { parsedBody: body });
    } finally {
      await server.close().catch(() => {});
    }
  };

  const openSession = async (project: string, request: Request, body: unknown): Promise<Response> => {
    if (!sessions.reserve()) {
      return rpcError(
        503,
        -32000,
        `Too many MCP sessions are in use (${limits.maxSessions}, each with an open stream): close an agent, or start pulse with a larger --max-sessions.`,
      );
    }
    try {
      const server = createServer(project);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          sessions.add(
            id,
            {
              project,
              transport,
              async close() {
                try {
                  await transport.close();
                } finally {
                  await server.close();
                }
              },
            },
            clientOf(body),
          );
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      return await transport.handleRequest(request, { parsedBody: body });
    } finally {
      sessions.release();
    }
  };

  const handle = async function mcpRoute(c: Context, project: string): Promise<Response> {
    const request = c.req.raw;
    const sessionId = request.headers.get('mcp-session-id');
    let body: unknown;
    if (request.method === 'POST') {
      const text = await readLimited(request);
      if (text === null) {
        return rpcError(413, -32600, `Request body too large: the limit is ${MAX_BODY_BYTES} bytes.`);
      }
      try {
        body = JSON.parse(text);
      } catch {
        return rpcError(400, -32700, 'Parse error: the request body is not valid JSON.');
      }
      const problem = shapeProblem(body);
      if (problem)
        return rpcError(problem.code === -32600 ? 400 : 200, problem.code, problem.message, problem.id);
    }
    // A 2026-07-28 request carries its protocol revision in each message's _meta: no session, no GET stream.
    if (request.method === 'POST' && !sessionId && !(await isLegacyRequest(request, body))) {
      if (!modernServed()) return modernRefused(request);
      return modernLeg(project).handler.fetch(withAccept(request), { parsedBody: body });
    }
    if (sessionId) {
      const session = sessions.use(sessionId, agentNamed(body));
      if (session && session.project !== project) {
        return rpcError(
          404,
          -32001,
          `Session not found at this project's endpoint: it was opened for project ${session.project}. Initialize a new session.`,
        );
      }
      if (!session) {
        return rpcError(
          404,
          -32001,
          'Session not found: it expired or the daemon restarted. Initialize a new session.',
        );
      }
      const response = await session.transport.handleRequest(
        request,
        body === undefined ? undefined : { parsedBody: body },
      );
      // The GET notification stream lives as long as the client listens: the session is in use till it ends.
      return request.method === 'GET' ? onStreamEnd(response, sessions.openStream(sessionId)) : response;
    }
    if (request.method !== 'POST') {
      return rpcError(
        400,
        -32000,
        'Bad Request: Mcp-Session-Id header is required. Initialize a session first.',
      );
    }
    const messages = messagesOf(body);
    // A script that cannot read a stream initializes statelessly and gets JSON, as from PulseAgent.
    if (messages.some((m) => isInitializeRequest(m)) && acceptsStream(request)) {
      return openSession(project, request, body);
    }
    return serveOneShot(project, request, body);
  };

  return {
    handle,
    /** The open sessions of one project, or of all. */
    sessionCount: (project?: string) =>
      sessions.facts((s) => project === undefined || s.project === project).length,
    /** The open sessions of one project (or of all), oldest first. */
    sessions: (project?: string) => sessions.facts((s) => project === undefined || s.project === project),
    /** Closes every session and 2026 handler, or one project's; one failing close does not skip the rest. */
    close: async (project?: string) => {
      await Promise.allSettled([
        sessions.close((s) => project === undefined || s.project === project),
        closeModern(project),
      ]);
    },
  };
};
