import { describe, expect, it } from 'vitest';
import { abandonSession } from '../../harness/mcp-session.js';
import { callTool, waitUntil } from '../support/daemon.js';
import { useDaemons } from '../support/started.js';
import { callOnSession, health, streamingClient } from './raw-clients.js';

/*
 * MCP session expiry and the session cap, on a real `pulse start` with short limits set by
 * flag: sessions abandoned the way a killed agent leaves them (initialized, no stream open),
 * beside SDK clients that keep their notification stream open.
 */

const daemons = useDaemons('pulse-sessions-');
const daemonWith = daemons.start;

const streaming = async (url: string) => {
  const listener = await streamingClient(url);
  daemons.keep(listener.client);
  return listener;
};

const expectGone = async (url: string, sessionId: string) => {
  const { status, answer } = await callOnSession(url, sessionId);
  expect(status).toBe(404);
  expect(answer.error!.code).toBe(-32001);
  expect(answer.error!.message).toMatch(/^Session not found: .*Initialize a new session\.$/);
};

describe('MCP session limits', () => {
  it('closes sessions idle past --session-idle: they get 404 and their push watches are released; an open stream keeps its session', async () => {
    const daemon = await daemonWith(['--session-idle', '1s']);
    const listener = await streaming(daemon.url);
    // Each holds a push watch until it is closed (counted in the --max-sessions test below, which has no expiry).
    const abandoned = await Promise.all(Array.from({ length: 5 }, () => abandonSession(daemon.url)));

    await waitUntil(
      async () => {
        const h = await health(daemon.url);
        return h.sessions === 1 && h.push_watches === 1;
      },
      { timeoutMs: 15_000, describe: () => 'the five abandoned sessions expiring' },
    );
    for (const id of abandoned) await expectGone(daemon.url, id);
    // Idle as long as the others, but its stream is open: still served.
    expect((await callTool(listener.client, 'pulse_should_interrupt')).needs_replan).toBe(false);

    // Once its stream ends, its idle clock runs too.
    const id = listener.transport.sessionId!;
    await listener.client.close();
    await waitUntil(async () => (await health(daemon.url)).sessions === 0, {
      timeoutMs: 15_000,
      describe: () => 'the session expiring once its stream closed',
    });
    expect((await health(daemon.url)).push_watches).toBe(0);
    await expectGone(daemon.url, id);
  });

  it('at --max-sessions, a new session closes the least recently used idle one and never one with an open stream', async () => {
    const daemon = await daemonWith(['--max-sessions', '3']);
    const oldest = await streaming(daemon.url);
    const used = await abandonSession(daemon.url);
    const unused = await abandonSession(daemon.url);
    expect((await callOnSession(daemon.url, used)).status).toBe(200);

    const newest = await abandonSession(daemon.url);
    await expectGone(daemon.url, unused);
    expect((await callOnSession(daemon.url, used)).status).toBe(200);
    expect((await callOnSession(daemon.url, newest)).status).toBe(200);
    expect((await callTool(oldest.client, 'pulse_should_interrupt')).needs_replan).toBe(false);
    expect(await health(daemon.url)).toMatchObject({ sessions: 3, push_watches: 3 });
  });

  it('refuses a new session with 503 and says why when every session held has an open stream', async () => {
    const daemon = await daemonWith(['--max-sessions', '1']);
    const only = await streaming(daemon.url);
    const response = await fetch(daemon.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(response.status).toBe(503);
    expect((await response.json()).error.message).toContain('start pulse with a larger --max-sessions');
    expect((await callTool(only.client, 'pulse_should_interrupt')).needs_replan).toBe(false);
  });
});
