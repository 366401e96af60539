import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import {
  createMcpHandler,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { Hono } from 'hono';
import { z } from 'zod';
import { jsonResult } from '../../src/mcp/json-result.js';
import { type InterruptAnswer, interruptOutputSchema } from '../../src/mcp/should-interrupt.js';

/**
 * The floor: the thinnest MCP server the v2 SDK allows over streamable HTTP, with one tool of
 * the same shape as `pulse_should_interrupt` (same input and output schemas, which the SDK
 * validates) that returns a fixed answer captured from the real daemon, so both send the same
 * bytes. Two endpoints on one Hono app: `/mcp` serves the 2025 era as the daemon does (sessions
 * on `WebStandardStreamableHTTPServerTransport`, and one-shot POSTs), `/modern` serves
 * 2026-07-28 per request (`createMcpHandler(factory, { legacy: 'reject' })`); no actors, no
 * files, no checks. Run: `node dist/bench/call-cost/floor-server.js ANSWER.json`; prints
 * `FLOOR <origin>`.
 */

const answer = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as InterruptAnswer;

// Built once and shared by every server, as the daemon does (src/mcp/server.ts): as thin as the SDK allows.
const validator = new AjvJsonSchemaValidator();
const inputSchema = z.object({
  last_seen_event_id: z.string().nullable().optional(),
  agent: z.string().optional(),
});

const createServer = () => {
  const server = new McpServer({ name: 'floor', version: '1.0.0' }, { jsonSchemaValidator: validator });
  server.registerTool(
    'pulse_should_interrupt',
    { inputSchema, outputSchema: interruptOutputSchema },
    async () => jsonResult(answer),
  );
  return server;
};

const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
const modern = createMcpHandler(createServer, { legacy: 'reject' });

const app = new Hono();
app.all('/modern', (c) => modern.fetch(c.req.raw));
app.all('/mcp', async (c) => {
  const request = c.req.raw;
  const body = (request.method === 'POST' ? await request.json() : undefined) as
    | { method?: string }
    | undefined;
  const sessionId = request.headers.get('mcp-session-id');
  const session = sessionId === null ? undefined : sessions.get(sessionId);
  if (session) return session.handleRequest(request, body === undefined ? undefined : { parsedBody: body });
  const server = createServer();
  if (sessionId === null && body?.method !== 'initialize') {
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody: body });
    } finally {
      await server.close();
    }
  }
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: randomUUID,
    onsessioninitialized: (id) => {
      sessions.set(id, transport);
    },
  });
  await server.connect(transport);
  return transport.handleRequest(request, { parsedBody: body });
});

serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
  console.log(`FLOOR http://127.0.0.1:${info.port}`);
});
