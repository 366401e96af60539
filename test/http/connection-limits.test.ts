import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { Agent, get } from 'node:http';
import type { Socket } from 'node:net';
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
} from '../support/daemon.js';
import { save } from '../support/files.js';
import { useDaemons } from '../support/started.js';
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

  it('at the cap sheds the oldest stalled connections for new ones, so agents connected before and after keep working and edits are logged', async () => {
    const daemon = await daemonWith(['--max-connections', '24']);
    const first = await stall(daemon.url, HALF_SENT_BODY, 20);
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

    // Past the cap: each newcomer takes the place of the oldest stalled connection, closed unanswered.
    const second = await stall(daemon.url, HALF_SENT_HEADERS, 30);
    const shut = new Set<StalledSocket>();
    for (const stalled of [...first, ...second]) void stalled.closed.then(() => shut.add(stalled));
    const answers = await within(
      Promise.all(first.map(({ closed }) => closed)),
      15_000,
      'the 20 oldest stalled connections shed',
    );
    expect(answers.every((answer) => answer === '')).toBe(true);
    // The agent connected before keeps its connections; one connecting now is served too.
    expect((await callTool(agent, 'pulse_should_interrupt')).needs_replan).toBe(true);
    const late = daemons.keep(await connectClient(daemon.url));
    expect((await callTool(late, 'pulse_should_interrupt')).needs_replan).toBe(true);
    await save(guidance(daemon.project), '# Guidance\n\nSecond change, during the flood.\n');
    await guidanceLogged(daemon.project, 2);
    const after = (await health(daemon.url)).connections!;
    // The newest stalled connections are the last to go: the few new ones since shed older ones.
    expect(second.slice(-10).filter((stalled) => shut.has(stalled))).toEqual([]);
    expect(after.open).toBeLessThanOrEqual(24);
    expect(after.shed).toBeGreaterThanOrEqual(26);
    expect(after.refused).toBe(0);
    expect(daemon.process.exitCode).toBeNull();
    console.log(
      `flood: cap 24; ${during.connections!.open} open with 20 stalled; 30 more shed the 20 oldest; ${after.shed} shed in all, ${after.refused} refused; ${after.open} open after`,
    );
  });

  it('at the cap sheds an idle keep-alive connection before refusing, and refuses a newcomer unanswered only when every connection is a stream', async () => {
    const daemon = await daemonWith(['--max-connections', '3']);
    const statusUrl = new URL('/status/stream', daemon.url).href;
    const opened = async () => {
      const stream = await openStatusStream(statusUrl);
      streams.push(stream);
      return stream;
    };
    const [one, two] = [await opened(), await opened()];
    const keptAlive = new Agent({ keepAlive: true });
    try {
      // A request answered on a kept-alive connection leaves it open and idle, in the third place.
      const idle = await new Promise<Socket>((resolve, reject) => {
        let socket: Socket;
        get(new URL('/healthz', daemon.url), { agent: keptAlive }, (response) => {
          response.resume();
          response.on('end', () => resolve(socket));
        })
          .on('socket', (s) => {
            socket = s;
          })
          .on('error', reject);
      });
      const idleClosed = new Promise<void>((resolve) => idle.once('close', () => resolve()));

      const [stalled] = await stall(daemon.url, HALF_SENT_BODY, 1);
      await within(idleClosed, 10_000, 'the idle keep-alive connection shed');
      const three = await opened();
      expect(await within(stalled!.closed, 10_000, 'the stalled connection shed for a stream')).toBe('');

      // Three streams hold the three places: nothing can go, so the newcomer is closed unanswered.
      const [refused] = await stall(daemon.url, HALF_SENT_HEADERS, 1);
      expect(await within(refused!.closed, 10_000, 'the newcomer refused')).toBe('');
      three.close();
      const counts = await waitUntil(
        async () => (await health(daemon.url).catch(() => null))?.connections ?? undefined,
        { timeoutMs: 10_000, describe: () => 'healthz once a stream closed' },
      );
      // At least: a probe sent while the closed stream still holds its place is refused or sheds it.
      expect(counts.shed).toBeGreaterThanOrEqual(2);
      expect(counts.refused).toBeGreaterThanOrEqual(1);
      // The streams that held their places still carry the replan.
      await save(guidance(daemon.project), '# Guidance\n\nChanged with the places full.\n');
      for (const stream of [one, two]) {
        await stream.next((status) => status.replan.pending_replan_event_id !== null, 15_000);
      }
    } finally {
      keptAlive.destroy();
    }
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
