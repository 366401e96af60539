import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CLI,
  callTool,
  connectClient,
  readEvents,
  removeProject,
  tempProject,
  waitUntil,
} from '../helpers/daemon.js';
import { save } from '../helpers/files.js';
import { useDaemons } from './daemons.js';
import {
  HALF_SENT_BODY,
  HALF_SENT_HEADERS,
  health,
  type StalledSocket,
  stalledSocket,
  streamingClient,
  within,
} from './raw-clients.js';
import { openStatusStream, type StatusStreamReader } from './sse-reader.js';

/*
 * The daemon's connection limits against real sockets: a `pulse start` child process, raw TCP
 * clients that send part of a request and stop, and SDK session clients beside them.
 */

const daemons = useDaemons('pulse-limits-');
const daemonWith = daemons.start;
const sockets: StalledSocket[] = [];
const streams: StatusStreamReader[] = [];

afterEach(() => {
  for (const { socket } of sockets.splice(0)) socket.destroy();
  for (const stream of streams.splice(0)) stream.close();
});

const stall = async (url: string, payload: string, count: number) => {
  const opened = await Promise.all(Array.from({ length: count }, () => stalledSocket(url, payload)));
  sockets.push(...opened);
  return opened;
};

const guidance = (project: string) => join(project, '.pulse', 'guidance.md');

const guidanceLogged = (project: string, count: number) =>
  waitUntil(
    async () => (await readEvents(project)).filter((e) => e.path === '.pulse/guidance.md').length >= count,
    { timeoutMs: 15_000, describe: () => `${count} guidance events in events.jsonl` },
  );

describe('connection limits', () => {
  it('answers half-sent requests with 408 and closes them within the timeouts, while a session stream and the status stream open longer still push', async () => {
    const daemon = await daemonWith(['--headers-timeout', '1s', '--request-timeout', '2s']);
    // Opened first, so by the time the stalled requests are closed it has been open longer than both timeouts.
    const listener = await streamingClient(daemon.url);
    daemons.keep(listener.client);
    const page = await openStatusStream(new URL('/status/stream', daemon.url).href);
    streams.push(page);

    const bodies = await stall(daemon.url, HALF_SENT_BODY, 20);
    const headers = await stall(daemon.url, HALF_SENT_HEADERS, 10);
    const silent = await stall(daemon.url, '', 5);
    const answers = await within(
      Promise.all([...bodies, ...headers, ...silent].map(({ closed }) => closed)),
      20_000,
      'the server closing 35 stalled connections',
    );
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    // Nothing the daemon says about the requests it cut short: they are expected, not errors.
    expect(daemon.output()).not.toMatch(/error|abort/i);

    // The streams outlived the request timeout: a replan still reaches both, and calls still answer.
    await save(guidance(daemon.project), '# Guidance\n\nUse the v2 API.\n');
    await waitUntil(() => listener.logs.some((line) => line.includes('your plan is on hold')), {
      timeoutMs: 15_000,
      describe: () => 'the replan warning on the old stream',
    });
    await page.next((status) => status.replan.pending_replan_event_id !== null, 15_000);
    const answer = await callTool(listener.client, 'pulse_should_interrupt');
    expect(answer.needs_replan).toBe(true);
    expect((await health(daemon.url)).connections!.open).toBeLessThan(5);
  });

  it('keeps serving agents and logging edits below the cap, refuses connections past it without dying, and recovers', async () => {
    const daemon = await daemonWith(['--max-connections', '24']);
    const flood = await stall(daemon.url, HALF_SENT_BODY, 20);
    const during = await waitUntil(
      async () => {
        const h = await health(daemon.url);
        return h.connections!.open >= 21 && h;
      },
      { describe: () => '20 stalled connections counted' },
    );
    expect(during.connections!.max).toBe(24);

    // Below the cap: a new agent connects and calls; an edit is logged by the watcher alone.
    const agent = daemons.keep(await connectClient(daemon.url));
    expect((await callTool(agent, 'pulse_should_interrupt')).needs_replan).toBe(false);
    await save(guidance(daemon.project), '# Guidance\n\nFirst change.\n');
    await guidanceLogged(daemon.project, 1);

    // Past the cap: every further connection is closed unanswered; the daemon lives and logs.
    const beyond = await stall(daemon.url, HALF_SENT_BODY, 30);
    const refused: string[] = [];
    for (const { closed } of beyond) void closed.then((answer) => answer === '' && refused.push(answer));
    // The agent holds at most 2 of the 4 places left; the rest, and every later one, is refused.
    await waitUntil(() => refused.length >= 30 - 4, {
      timeoutMs: 15_000,
      describe: () => `connections past the cap refused (${refused.length} so far)`,
    });
    // An agent already connected keeps its kept-alive connections, and so keeps working.
    expect((await callTool(agent, 'pulse_should_interrupt')).needs_replan).toBe(true);
    await save(guidance(daemon.project), '# Guidance\n\nSecond change, during the flood.\n');
    await guidanceLogged(daemon.project, 2);
    expect(daemon.process.exitCode).toBeNull();

    // Once the flood goes, new connections are served again.
    for (const { socket } of flood) socket.destroy();
    const after = await waitUntil(
      async () => {
        const h = await health(daemon.url).catch(() => null);
        return h !== null && h.connections!.open < 10 && h;
      },
      { timeoutMs: 15_000, describe: () => 'the daemon answering after the flood' },
    );
    expect(after.connections!.refused).toBeGreaterThanOrEqual(refused.length);
    const late = daemons.keep(await connectClient(daemon.url));
    expect((await callTool(late, 'pulse_should_interrupt')).needs_replan).toBe(true);
    console.log(
      `flood: cap 24; ${during.connections!.open} open with 20 stalled; ${refused.length} of 30 more refused unanswered; ${after.connections!.refused} refused in all; ${after.connections!.open} open after`,
    );
  });
});

describe('the connection cap and the open-file limit', () => {
  /** `pulse start` under `ulimit -n 200`, stopped once it prints its summary. */
  const startUnderLimit = (project: string, args: string[]) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const command = `ulimit -n 200 && exec "$0" "$@"`;
      const child = execFile(
        '/bin/sh',
        ['-c', command, process.execPath, CLI, 'start', '-p', project, '--port', '0', ...args],
        { timeout: 15_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
      );
      child.stdout!.on('data', (data: Buffer) => {
        if (String(data).includes('MCP endpoint:')) child.kill('SIGTERM');
      });
    });

  it('lowers the default cap to half the open-file limit and says so; refuses an asked-for cap above it and writes nothing', async () => {
    const project = await tempProject('pulse-limits-');
    try {
      const lowered = await startUnderLimit(project, []);
      expect(lowered.output).toMatch(
        /^Limits: 100 connections \(not 256: half the open-file limit of 200 stays free\), headers within 10s, requests within 30s; 1000 MCP sessions, each closed after 30m idle$/m,
      );
      const other = await tempProject('pulse-limits-');
      try {
        const refused = await startUnderLimit(other, ['--max-connections', '150']);
        expect(refused.code).toBe(1);
        expect(refused.output).toContain('Use at most --max-connections 100, or raise the limit (ulimit -n)');
        expect(await readdir(other)).toEqual([]);
      } finally {
        await removeProject(other);
      }
    } finally {
      await removeProject(project);
    }
  });
});
