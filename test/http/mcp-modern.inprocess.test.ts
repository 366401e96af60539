import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InterruptAnswer } from '../../src/mcp/should-interrupt.js';
import { inProcessApp } from './in-process-app.js';

/*
 * The 2026-07-28 leg of the MCP endpoint, in process: what a hostile caller can send it. The
 * guards in front of the endpoint (peer uid, browser) apply to it as to the 2025 route, and a
 * request it cannot serve is refused with an error that says why.
 */

type Served = Awaited<ReturnType<typeof inProcessApp>>;

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'claude-code', version: '2.1.332' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

const modernCall = (name: string, args: Record<string, unknown> = {}, meta: Record<string, unknown> = META) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name, arguments: args, _meta: meta },
  });

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'pulse_should_interrupt',
};

describe('the 2026-07-28 leg of /mcp', () => {
  let served: Served;
  beforeAll(async () => {
    served = await inProcessApp();
  });
  afterAll(() => served?.stop());

  const post = (path: string, body: string, init: { headers?: Record<string, string>; uid?: number } = {}) =>
    served.request(path, { method: 'POST', headers: { ...HEADERS, ...init.headers }, body, uid: init.uid });

  it('answers a tool call that carries its revision in _meta, with no session and a handle to be known by', async () => {
    const response = await post(`/p/${served.id}/mcp`, modernCall('pulse_should_interrupt'));
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const { result } = (await response.json()) as { result: { structuredContent: Record<string, unknown> } };
    expect(result.structuredContent.agent_handle).toMatch(/^[A-Za-z0-9_-]{8,64}$/);
    expect(result).not.toHaveProperty('ttlMs');
  });

  it('sees, in the call right after it, a guidance write the previous 2026 call could not have seen', async () => {
    const call = async (args: Record<string, unknown>) => {
      const response = await post(`/p/${served.id}/mcp`, modernCall('pulse_should_interrupt', args));
      const { result } = (await response.json()) as { result: { structuredContent: InterruptAnswer } };
      return result.structuredContent;
    };
    const first = await call({});
    const handle = first.agent_handle;
    // Warm: the same caller again, then a write and at once another call (no wait for the watcher).
    const quiet = await call({ handle, last_seen_event_id: first.latest_event_id });
    expect(quiet.has_new_events).toBe(false);
    for (let round = 0; round < 5; round++) {
      const before = await call({ handle, last_seen_event_id: null });
      await writeFile(join(served.project, '.pulse', 'guidance.md'), `Round ${round}: stop and replan.\n`);
      const after = await call({ handle, last_seen_event_id: before.latest_event_id });
      expect(after.latest_event_id).not.toBe(before.latest_event_id);
      expect(after.changed_files).toContain('.pulse/guidance.md');
      expect(after.needs_replan).toBe(true);
    }
  });

  it('refuses a 2026 request to a project this daemon does not serve, naming it', async () => {
    const response = await post('/p/0123456789abcdef/mcp', modernCall('pulse_should_interrupt'));
    expect(response.status).toBe(404);
    expect(await response.text()).toMatch(/0123456789abcdef/);
  });

  it('refuses a body over the 1 MiB limit with 413 before reading it as JSON', async () => {
    const response = await post(
      '/mcp',
      modernCall('pulse_should_interrupt', { agent: 'x'.repeat(1024 * 1024) }),
    );
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /too large: the limit is 1048576 bytes/,
    );
  });

  it('refuses a revision it does not speak, naming the ones it does', async () => {
    const response = await post(
      '/mcp',
      modernCall(
        'pulse_should_interrupt',
        {},
        { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
      ),
      { headers: { 'mcp-protocol-version': '2099-01-01' } },
    );
    const body = (await response.json()) as { error: { code: number; message: string; data?: unknown } };
    expect(response.status).toBe(400);
    expect(body.error.message).toMatch(/2099-01-01/);
    expect(JSON.stringify(body.error.data)).toContain('2026-07-28');
  });

  it('refuses a malformed _meta clientInfo with a JSON-RPC error, not a decision', async () => {
    const response = await post(
      '/mcp',
      modernCall('pulse_should_interrupt', {}, { ...META, 'io.modelcontextprotocol/clientInfo': 'claude' }),
    );
    const body = (await response.json()) as { result?: unknown; error?: { code: number; message: string } };
    expect(body.result).toBeUndefined();
    expect(body.error?.code).toBe(-32602);
  });

  it("refuses another account's 2026 request and a browser page's, as on the 2025 route", async () => {
    const otherUser = await post('/mcp', modernCall('pulse_should_interrupt'), { uid: 65534 });
    expect(otherUser.status).toBe(403);
    const page = await post('/mcp', modernCall('pulse_should_interrupt'), {
      headers: { origin: 'http://evil.example' },
    });
    expect(page.status).toBe(403);
    const form = await post('/mcp', modernCall('pulse_should_interrupt'), {
      headers: { 'content-type': 'text/plain' },
    });
    expect(form.status).toBe(415);
  });
});
