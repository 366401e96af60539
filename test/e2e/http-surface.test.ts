import { request } from 'node:http';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callTool,
  connectClient,
  oneShot,
  type RunningDaemon,
  removeProject,
  startDaemon,
  tempProject,
} from '../support/daemon.js';
import { save } from '../support/files.js';

interface RpcError {
  jsonrpc: string;
  id: null;
  error: { code: number; message: string };
}

interface Health {
  ok: boolean;
  name: string;
  project: string;
  events: number;
  sessions: number;
  error: string | null;
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * A POST through node:http, which sends only the headers given: no default Accept (fetch adds
 * `*\/*`) and a Host header of our choosing (fetch does not let us set one).
 */
const rawPost = (url: string, body: string | Buffer, headers: Record<string, string> = {}) =>
  new Promise<RawResponse>((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });

/** A session client on a transport the test keeps, to read its session id or terminate it. */
const connectWith = async (transport: StreamableHTTPClientTransport): Promise<Client> => {
  const client = new Client({ name: 'pulse-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
};

const rpc = (method: string, params: unknown = {}, id: number | string = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

describe('the HTTP surface of /mcp', () => {
  let project: string;
  let daemon: RunningDaemon;
  let url: string;

  beforeAll(async () => {
    project = await tempProject('pulse-http-');
    daemon = await startDaemon(project);
    url = daemon.url;
  });

  afterAll(async () => {
    await daemon?.stop();
    await removeProject(project);
  });

  describe('one-shot clients (no session; curl-style scripts)', () => {
    it('answers a tools/call POST with the decision as structuredContent and JSON text', async () => {
      const { status, body } = await oneShot(url, 'tools/call', {
        name: 'pulse_should_interrupt',
        arguments: {},
      });
      expect(status).toBe(200);
      expect(body.jsonrpc).toBe('2.0');
      expect(body.id).toBe(1);
      expect(body.result!.isError).toBeFalsy();
      expect(body.result!.structuredContent!.needs_replan).toBe(false);
      expect(JSON.parse(body.result!.content![0]!.text)).toEqual(body.result!.structuredContent);
    });

    it('answers a POST that has no Accept header at all, with JSON', async () => {
      const body = rpc('tools/call', {
        name: 'pulse_should_interrupt',
        arguments: { last_seen_event_id: null },
      });
      const response = await rawPost(url, body, { 'content-type': 'application/json' });
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const answer = JSON.parse(response.text);
      expect(answer.result.structuredContent.reason).toBe(
        'No new PulseAgent events and no pending replan acknowledgement.',
      );
    });

    it('answers a POST that accepts only application/json', async () => {
      const { status, body } = await oneShot(url, 'tools/list', {}, { accept: 'application/json' });
      expect(status).toBe(200);
      expect(body.result!.tools!.map((tool: { name: string }) => tool.name)).toEqual([
        'pulse_should_interrupt',
        'pulse_ack_replan',
        'pulse_ack_events',
      ]);
    });

    it('reads the context resource and gets the prompt without a session', async () => {
      const resource = await oneShot(url, 'resources/read', { uri: 'pulse://context/latest' });
      expect(resource.status).toBe(200);
      expect(resource.body.result!.contents![0]!.text).toMatch(/^# PulseAgent Context\n/);
      const prompt = await oneShot(url, 'prompts/get', { name: 'pulse_replan' });
      expect(prompt.status).toBe(200);
      expect(prompt.body.result!.messages![0]!.content.text).toContain('pulse_should_interrupt');
    });

    it('sees a write made before the call (read-your-writes) and acks it without a session', async () => {
      await save(join(project, '.pulse', 'constraints.md'), '# Constraints\n\nOne-shot change.\n');
      const decision = await oneShot(url, 'tools/call', { name: 'pulse_should_interrupt', arguments: {} });
      const pending = decision.body.result!.structuredContent!.pending_replan_event_id;
      expect(decision.body.result!.structuredContent!.pending_replan_files).toEqual([
        '.pulse/constraints.md',
      ]);
      expect(pending).toMatch(/^evt_/);
      const ack = await oneShot(url, 'tools/call', {
        name: 'pulse_ack_replan',
        arguments: { event_id: pending },
      });
      expect(ack.body.result!.structuredContent).toMatchObject({
        accepted: true,
        acknowledged_event_id: pending,
      });
    });

    it('answers a script that initializes without accepting a stream with JSON and no session, as PulseAgent does', async () => {
      const initialize = rpc('initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'curl', version: '8' },
      });
      for (const headers of [
        { 'content-type': 'application/json' } as Record<string, string>,
        { 'content-type': 'application/json', accept: 'application/json' },
      ]) {
        const response = await rawPost(url, initialize, headers);
        expect(response.status).toBe(200);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        expect(response.headers['mcp-session-id']).toBeUndefined();
        expect(JSON.parse(response.text).result.serverInfo.name).toBe('pulse-agent');
      }
      const initialized = await rawPost(
        url,
        JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        {
          'content-type': 'application/json',
        },
      );
      expect(initialized.status).toBe(202);
      const list = await oneShot(url, 'tools/list', {}, { accept: 'application/json' });
      expect(list.body.result!.tools).toHaveLength(3);
    });

    it('rejects an argument of the wrong type as an isError result naming -32602', async () => {
      const { status, body } = await oneShot(url, 'tools/call', {
        name: 'pulse_should_interrupt',
        arguments: { last_seen_event_id: 42 },
      });
      expect(status).toBe(200);
      expect(body.result!.isError).toBe(true);
      expect(body.result!.content![0]!.text).toContain('-32602');
      expect(body.result!.content![0]!.text).toContain('last_seen_event_id');
    });

    it('answers a call to an unknown tool with an error naming the tool', async () => {
      const { status, body } = await oneShot(url, 'tools/call', { name: 'pulse_nope', arguments: {} });
      expect(status).toBe(200);
      expect(body.result!.isError).toBe(true);
      expect(body.result!.content![0]!.text).toContain('Tool pulse_nope not found');
    });

    it('answers an unknown resource with a JSON-RPC error', async () => {
      const { status, body } = await oneShot(url, 'resources/read', { uri: 'pulse://nope' });
      expect(status).toBe(200);
      expect(body.result).toBeUndefined();
      expect(body.error!.code).toBe(-32602);
    });
  });

  describe('session clients', () => {
    it('initializes a session, gets an Mcp-Session-Id and calls tools on it', async () => {
      const transport = new StreamableHTTPClientTransport(new URL(url));
      const client = await connectWith(transport);
      try {
        expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
        expect(
          JSON.parse(await (await fetch(new URL('/healthz', url))).text()).sessions,
        ).toBeGreaterThanOrEqual(1);
        expect(client.getServerVersion()?.name).toBe('pulse-agent');
        const decision = await callTool(client, 'pulse_should_interrupt', { last_seen_event_id: null });
        expect(decision).toHaveProperty('needs_replan');
        const wrong = await client.callTool({ name: 'pulse_ack_replan', arguments: { event_id: 7 } });
        expect(wrong.isError).toBe(true);
        expect((wrong.content as Array<{ text: string }>)[0]!.text).toContain('-32602');
      } finally {
        await client.close();
      }
    });

    it('answers 404 to a request naming a session it does not know', async () => {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': '00000000-0000-4000-8000-000000000000',
        },
        body: rpc('tools/list'),
      });
      expect(response.status).toBe(404);
      const body = (await response.json()) as RpcError;
      expect(body.jsonrpc).toBe('2.0');
      expect(body.error.message).toMatch(/Session not found/);
      const get = await fetch(url, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': 'no-such-session' },
      });
      expect(get.status).toBe(404);
      await get.body?.cancel();
    });

    it('forgets a session once its client terminates it', async () => {
      const transport = new StreamableHTTPClientTransport(new URL(url));
      const client = await connectWith(transport);
      const sessionId = transport.sessionId!;
      await transport.terminateSession();
      await client.close();
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionId,
        },
        body: rpc('tools/list'),
      });
      expect(response.status).toBe(404);
      await response.body?.cancel();
    });

    it('answers 400 to a GET without a session id', async () => {
      const response = await fetch(url, { headers: { accept: 'text/event-stream' } });
      expect(response.status).toBe(400);
      const body = (await response.json()) as RpcError;
      expect(body.error.message).toMatch(/Mcp-Session-Id/);
    });
  });

  describe('DNS-rebinding guard', () => {
    const body = rpc('tools/list');
    const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

    it('refuses a foreign Host header with 403', async () => {
      const response = await rawPost(url, body, { ...json, host: `evil.example:${daemon.port}` });
      expect(response.status).toBe(403);
      expect(JSON.parse(response.text).error.message).toMatch(/evil\.example/);
    });

    it('accepts Host localhost and 127.0.0.1', async () => {
      for (const host of [`localhost:${daemon.port}`, `127.0.0.1:${daemon.port}`]) {
        const response = await rawPost(url, body, { ...json, host });
        expect(response.status).toBe(200);
        expect(JSON.parse(response.text).result.tools).toHaveLength(3);
      }
    });

    it('refuses a foreign Origin, and the null Origin, with 403', async () => {
      for (const origin of ['https://evil.example', 'http://localhost.evil.example:3000', 'null']) {
        const response = await rawPost(url, body, { ...json, origin });
        expect(response.status, origin).toBe(403);
      }
    });

    it("refuses another loopback port's page, and accepts its own origin", async () => {
      for (const origin of ['http://localhost:5173', 'http://127.0.0.1:3000', 'http://localhost']) {
        const response = await rawPost(url, body, { ...json, origin });
        expect(response.status, origin).toBe(403);
      }
      const own = await rawPost(url, body, { ...json, origin: `http://127.0.0.1:${daemon.port}` });
      expect(own.status).toBe(200);
    });

    it('guards /healthz too', async () => {
      const response = await fetch(new URL('/healthz', url), { headers: { origin: 'https://evil.example' } });
      expect(response.status).toBe(403);
      await response.body?.cancel();
    });
  });

  describe('bad requests', () => {
    it('answers malformed JSON with 400 and a JSON-RPC parse error', async () => {
      const response = await rawPost(url, '{"jsonrpc":"2.0","id":1,"method":', {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      });
      expect(response.status).toBe(400);
      const body = JSON.parse(response.text);
      expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    });

    it('refuses a body over 1 MiB with 413, whether it declares its length or not', async () => {
      const big = rpc('tools/call', {
        name: 'pulse_should_interrupt',
        arguments: { last_seen_event_id: 'x'.repeat(1024 * 1024) },
      });
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const declared = await rawPost(url, big, {
        ...headers,
        'content-length': String(Buffer.byteLength(big)),
      });
      expect(declared.status).toBe(413);
      expect(JSON.parse(declared.text).error.message).toMatch(/too large/);
      // Chunked: no Content-Length, so the limit is enforced while reading.
      const chunked = await rawPost(url, big, { ...headers, 'transfer-encoding': 'chunked' });
      expect(chunked.status).toBe(413);
    });

    it('accepts a body just under 1 MiB', async () => {
      const padding = 'x'.repeat(1024 * 1024 - 200);
      const body = rpc('tools/call', {
        name: 'pulse_should_interrupt',
        arguments: { last_seen_event_id: padding },
      });
      expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024);
      const response = await rawPost(url, body, { 'content-type': 'application/json' });
      expect(response.status).toBe(200);
      const answer = JSON.parse(response.text);
      expect(answer.result.structuredContent.last_seen_event_known).toBe(false);
    });

    it('answers an unknown path with 404 naming the MCP endpoint', async () => {
      const response = await fetch(new URL('/nope', url));
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: string }).error).toContain('/mcp');
    });
  });

  describe('health and resilience', () => {
    it('answers /healthz with JSON saying ok', async () => {
      const response = await fetch(new URL('/healthz', url));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await response.json()) as Health;
      expect(body).toMatchObject({ ok: true, name: 'pulse-agent', error: null });
      expect(body.project).toBe(project);
      expect(typeof body.events).toBe('number');
    });

    it('still serves a one-shot and a new session client after all of the above', async () => {
      expect(daemon.process.exitCode).toBeNull();
      const { status, body } = await oneShot(url, 'tools/call', {
        name: 'pulse_should_interrupt',
        arguments: {},
      });
      expect(status).toBe(200);
      expect(body.result!.isError).toBeFalsy();
      expect(body.result!.structuredContent!.needs_replan).toBe(false);
      const client = await connectClient(url);
      try {
        const decision = await callTool(client, 'pulse_should_interrupt');
        expect(decision.needs_replan).toBe(false);
      } finally {
        await client.close();
      }
      const health = await fetch(new URL('/healthz', url));
      expect(((await health.json()) as Health).ok).toBe(true);
    });

    it('exits cleanly with code 0 on SIGTERM', async () => {
      expect(await daemon.stop()).toBe(0);
      expect(daemon.output()).toContain('shutting down');
    });
  });
});
