import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connectClient, waitUntil } from '../support/daemon.js';
import { save } from '../support/files.js';
import { useDaemons } from '../support/started.js';
import {
  HALF_SENT_BODY,
  HALF_SENT_HEADERS,
  health,
  postFresh,
  type StalledSocket,
  stalledSocket,
  streamingClient,
} from './raw-clients.js';
import { openStatusStream, type StatusStreamReader } from './sse-reader.js';

/*
 * A connection flood against a daemon whose process may open 1,024 files, as in a small
 * container: 1,100 raw sockets that each send part of a request and stop, while a hook, an MCP
 * call and the streams opened before the flood must still be answered.
 */

const daemons = useDaemons('pulse-flood-');
const sockets: StalledSocket[] = [];
const streams: StatusStreamReader[] = [];

afterEach(() => {
  for (const { socket } of sockets.splice(0)) socket.destroy();
  for (const stream of streams.splice(0)) stream.close();
});

/** The open-file limit of a small container, soft and hard, so Node cannot lift it. */
const UNDER_1024_FILES = ['/bin/sh', '-c', 'ulimit -n 1024 && exec "$0" "$@"'];

/** A hook request cut off inside its body, the third shape of the flood. */
const HALF_SENT_HOOK =
  'POST /hook/claude/PreToolUse HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{"session_id":"fl';

const FLOOD = 1100;
const SHAPES = [HALF_SENT_BODY, HALF_SENT_HEADERS, HALF_SENT_HOOK, ''];

/** Opens `count` stalled sockets, a hundred at a time, and counts those the server closes. */
const flood = async (url: string, count: number) => {
  const closed = { count: 0, answered: 0 };
  for (let start = 0; start < count; start += 100) {
    const batch = Array.from({ length: Math.min(100, count - start) }, (_, i) =>
      stalledSocket(url, SHAPES[(start + i) % SHAPES.length]!),
    );
    for (const stalled of await Promise.all(batch)) {
      sockets.push(stalled);
      void stalled.closed.then((answer) => {
        closed.count++;
        if (answer !== '') closed.answered++;
      });
    }
  }
  return closed;
};

const claudePreToolUse = (project: string, command: string) => ({
  session_id: 'flood-session',
  transcript_path: join(project, 'transcript.jsonl'),
  cwd: project,
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command },
  tool_use_id: 'toolu_flood',
});

describe('a connection flood at an open-file limit of 1,024', () => {
  it('sheds the oldest stalled connections so a hook is denied and an MCP call answers during a replan, and keeps the streams opened before', async () => {
    const daemon = await daemons.start(['--max-connections', '512'], UNDER_1024_FILES);
    expect(daemon.output()).toMatch(/^Limits: 512 connections \(open-file limit 1024\)/m);
    const listener = await streamingClient(daemon.url);
    daemons.keep(listener.client);
    const page = await openStatusStream(new URL('/status/stream', daemon.url).href);
    streams.push(page);

    const closed = await flood(daemon.url, FLOOD);
    // The cap holds 512: every flood socket past the places the streams and the agent keep is shed.
    await waitUntil(() => closed.count >= FLOOD - 512, {
      timeoutMs: 20_000,
      describe: () => `flood sockets shed (${closed.count} so far)`,
    });
    await save(join(daemon.project, '.pulse', 'guidance.md'), '# Guidance\n\nKeep src; use the v2 API.\n');
    await waitUntil(() => listener.logs.some((line) => line.includes('your plan is on hold')), {
      timeoutMs: 15_000,
      describe: () => 'the replan warning on the stream opened before the flood',
    });

    // Each on a new connection, as a hook process and a one-shot agent call arrive.
    const hook = await postFresh(
      new URL('/hook/claude/PreToolUse', daemon.url).href,
      claudePreToolUse(daemon.project, 'rm -rf src'),
    );
    expect(hook.status).toBe(200);
    expect(hook.body.hookSpecificOutput).toMatchObject({
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
    });
    const call = await postFresh(daemon.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'pulse_should_interrupt', arguments: {} },
    });
    expect(call.status).toBe(200);
    const result = call.body.result as { structuredContent: { needs_replan: boolean } };
    expect(result.structuredContent.needs_replan).toBe(true);
    // A new session too, and the agent and the status page connected before the flood.
    const late = daemons.keep(await connectClient(daemon.url));
    expect((await callTool(late, 'pulse_should_interrupt')).needs_replan).toBe(true);
    expect((await callTool(listener.client, 'pulse_should_interrupt')).needs_replan).toBe(true);
    await page.next((status) => status.replan.pending_replan_event_id !== null, 15_000);

    const during = (await health(daemon.url)).connections!;
    expect(during.open).toBeLessThanOrEqual(512);
    expect(during.shed).toBeGreaterThanOrEqual(closed.count);
    expect(during.refused).toBe(0);
    // Shed, not answered: a stalled request gets nothing it could read as a reply.
    expect(closed.answered).toBe(0);
    expect(daemon.output()).not.toMatch(/EMFILE|error/i);
    expect(daemon.process.exitCode).toBeNull();
    console.log(
      `flood at 1024 files, cap 512: ${FLOOD} stalled sockets, ${closed.count} shed by the client's count; healthz open ${during.open}, shed ${during.shed}, refused ${during.refused}`,
    );
  });
});
