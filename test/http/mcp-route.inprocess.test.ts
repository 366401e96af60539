import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InProcessApp, inProcessApp } from './in-process-app.js';

/*
 * `/mcp` in process: a real MCP client whose fetch is Hono's `app.request()`, and the route's
 * JSON-RPC refusals. Over a spawned daemon's socket: test/e2e/http-surface.test.ts.
 */

let served: InProcessApp;
beforeAll(async () => {
  served = await inProcessApp();
});
afterAll(() => served.stop());

const STREAMING = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const rpc = (method: string, params: unknown = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const post = (body: string, headers: Record<string, string> = STREAMING) =>
  served.request('/mcp', { method: 'POST', headers, body });
const errorOf = async (response: Response) =>
  ((await response.json()) as { error: { code: number; message: string } }).error;
const sessions = async () =>
  ((await (await served.request('/healthz')).json()) as { sessions: number }).sessions;

describe('the MCP route, in process', () => {
  it('serves a session client: an Mcp-Session-Id, tool calls on it, and 404 once it is terminated', async () => {
    const transport = new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), {
      fetch: async (url, init) => served.request(String(url), init),
    });
    const client = new Client({ name: 'pulse-test', version: '1.0.0' });
    await client.connect(transport);
    const id = transport.sessionId!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await sessions()).toBe(1);
    const answer = await client.callTool({ name: 'pulse_should_interrupt', arguments: {} });
    expect(answer.structuredContent).toMatchObject({ needs_replan: false, pending_replan_event_id: null });
    await transport.terminateSession();
    await client.close();
    expect(await sessions()).toBe(0);
    const gone = await post(rpc('tools/list'), { ...STREAMING, 'mcp-session-id': id });
    expect(gone.status).toBe(404);
    expect(await errorOf(gone)).toEqual({
      code: -32001,
      message: 'Session not found: it expired or the daemon restarted. Initialize a new session.',
    });
  });

  it('answers a one-shot POST without a session, with JSON even when it accepts nothing', async () => {
    const response = await post(rpc('tools/list'), { 'content-type': 'application/json' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await response.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(3);
  });

  it('answers malformed JSON with a parse error, and a GET without a session with 400', async () => {
    const malformed = await post('{"jsonrpc":"2.0","id":1,"method":');
    expect(malformed.status).toBe(400);
    expect((await errorOf(malformed)).code).toBe(-32700);
    const get = await served.request('/mcp', { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(400);
    expect((await errorOf(get)).message).toMatch(/Mcp-Session-Id header is required/);
  });

  it('refuses a body over 1 MiB with 413 and takes one just under', async () => {
    const call = (padding: number) =>
      rpc('tools/call', {
        name: 'pulse_should_interrupt',
        arguments: { last_seen_event_id: 'x'.repeat(padding) },
      });
    const over = await post(call(1024 * 1024));
    expect(over.status).toBe(413);
    expect((await errorOf(over)).message).toBe('Request body too large: the limit is 1048576 bytes.');
    const under = call(1024 * 1024 - 200);
    expect(Buffer.byteLength(under)).toBeLessThan(1024 * 1024);
    expect((await post(under)).status).toBe(200);
  });
});
