import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PulseEvent } from '../../machines/pulse-files.js';
import { createStatusStream, type StatusStreamOptions } from '../../src/http/status-stream.js';
import { pulsePaths } from '../../src/store/paths.js';
import { ensurePulseFolder } from '../../src/store/pulse-folder.js';
import { ask } from '../../src/system/ask.js';
import { replanOf } from '../../src/system/ask-actors.js';
import { systemStatus } from '../../src/system/read-status.js';
import { createPulseSystem, type PulseSystem } from '../../src/system/wiring.js';
import { removeProject, tempProject, waitUntil } from '../support/daemon.js';
import { openStatusStream, type StatusStreamReader } from './sse-reader.js';

/*
 * The status stream in process, on a real actor system over real HTTP, so the test can count
 * what a stream holds in the daemon: its inspection subscription and its timers.
 */

const cleanups: Array<() => Promise<unknown> | unknown> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Inspection subscriptions taken and not yet released on this system. */
const countSubscriptions = (system: PulseSystem) => {
  const inspect = system.actor.system.inspect.bind(system.actor.system);
  let live = 0;
  system.actor.system.inspect = (observer) => {
    const subscription = inspect(observer);
    live++;
    return {
      unsubscribe() {
        live--;
        subscription.unsubscribe();
      },
    };
  };
  return () => live;
};

/** A started system on a fresh project, and the stream alone on a real port. */
const serveStream = async (options: Omit<StatusStreamOptions, 'actor'> = {}) => {
  const project = await tempProject('pulse-stream-');
  cleanups.push(() => removeProject(project));
  const paths = pulsePaths(project);
  await ensurePulseFolder(paths);
  const system = await createPulseSystem(paths, { log: () => {} });
  cleanups.push(() => system.stop());
  const subscriptions = countSubscriptions(system);
  system.actor.start();
  // Settled (first scan done, watcher ready), so a test sees only the changes it makes.
  await waitUntil(() => {
    const status = systemStatus(system.actor);
    return status.watcher.state === 'watching' && status.log.state.startsWith('ready.scan.idle');
  });
  const stream = createStatusStream({ actor: system.actor, ...options });
  const app = new Hono().get('/stream', stream.handle);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  cleanups.push(
    () =>
      new Promise((resolve) => {
        server.close(resolve);
        if ('closeAllConnections' in server) server.closeAllConnections();
      }),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
  const open = async (headers: Record<string, string> = {}) => {
    const reader = await openStatusStream(url, { headers });
    cleanups.push(() => reader.close());
    return reader;
  };
  return { system, stream, subscriptions, url, open };
};

const guidanceEvent = (n: number): PulseEvent => ({
  id: `evt-${n}`,
  timestamp: new Date().toISOString(),
  kind: 'modified',
  path: '.pulse/guidance.md',
  sha256: null,
  size: null,
});

const statusFrames = (reader: StatusStreamReader) => reader.frames.filter((f) => f.event === 'status');

/** The streams' coalescing clock, advanced by hand: a window ends only when the test ends it. */
const handClock = () => {
  const windows: Array<() => void> = [];
  return {
    wait: (_ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        windows.push(resolve);
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
    /** Windows a stream is waiting out now. */
    get open() {
      return windows.length;
    },
    /** Ends the oldest window, and lets the stream do what it does next short of a write. */
    async end() {
      windows.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
};

describe('the status stream', () => {
  it('sends the whole status as its first frame, with a reconnect delay for EventSource', async () => {
    const { open } = await serveStream({ retryMs: 1234 });
    const reader = await open();
    expect(reader.response.status).toBe(200);
    expect(reader.response.headers.get('content-type')).toBe('text/event-stream');
    const first = await reader.next(() => true);
    expect(first.replan).toMatchObject({ state: 'idle', pending_replan_event_id: null });
    expect(first.actors.map((a) => a.id)).toEqual([
      'log',
      'replan',
      'watcher',
      'inbox',
      'gate',
      'focus',
      'sources',
      'hooks',
      'steer',
      'notify',
    ]);
    expect(reader.frames[0]).toMatchObject({ event: 'status', retry: 1234 });
  });

  it('sends one frame for a burst of changes, showing where the burst ended', async () => {
    const clock = handClock();
    const { system, open } = await serveStream({ wait: clock.wait });
    const reader = await open();
    await reader.next(() => true);
    replanOf(system.actor).send({ type: 'log.appended', events: [guidanceEvent(1)] });
    // The stream noticed the first change and waits out its window; the rest come meanwhile.
    await waitUntil(() => clock.open === 1);
    for (let n = 2; n <= 8; n++) {
      replanOf(system.actor).send({ type: 'log.appended', events: [guidanceEvent(n)] });
    }
    await clock.end();
    const last = await reader.next((s) => s.replan.pending_replan_event_id === 'evt-8');
    expect(last.replan.state).toBe('pending');
    // The first frame, then the settled burst: no frame for a change in between.
    expect(
      reader.statuses().map((s) => s.replan.pending_replan_event_id),
      reader.text(),
    ).toEqual([null, 'evt-8']);
  });

  it('sends nothing when what the page shows did not change', async () => {
    const clock = handClock();
    const { system, open } = await serveStream({ wait: clock.wait });
    const reader = await open();
    await reader.next(() => true);
    // Refused acks are events the replan actor takes, and change nothing of its status.
    const refused = Array.from({ length: 10 }, () =>
      ask(replanOf(system.actor), (asking) => ({
        type: 'replan.ack',
        ...asking,
        eventId: 'nope',
        target: null,
        planSha256: null,
        at: new Date().toISOString(),
      })),
    );
    expect((await Promise.all(refused)).map((reply) => reply.code)).toEqual(Array(10).fill('unknown_event'));
    // The stream noticed the acks; once their window ends it has compared and sent nothing.
    await waitUntil(() => clock.open === 1);
    await clock.end();
    // Then a change the page does show: its frame must be the very next one.
    replanOf(system.actor).send({ type: 'log.appended', events: [guidanceEvent(1)] });
    await waitUntil(() => clock.open === 1);
    await clock.end();
    await reader.next((s) => s.replan.state === 'pending');
    expect(
      reader.statuses().map((s) => s.replan.state),
      reader.text(),
    ).toEqual(['idle', 'pending']);
  });

  it('keeps an idle stream alive with a comment line', async () => {
    const { open } = await serveStream({ heartbeatMs: 50 });
    const reader = await open();
    await waitUntil(() => reader.frames.filter((f) => f.comment === 'heartbeat').length >= 2, {
      describe: () => `two heartbeats in ${JSON.stringify(reader.text())}`,
    });
    expect(statusFrames(reader), reader.text()).toHaveLength(1);
  });

  it('releases its subscription and timers when the client goes away', async () => {
    const HEARTBEAT_MS = 59_000;
    // The heartbeat intervals this stream starts and stops: counting every timer of the process
    // would also count other tests' and the actors' timers, which come and go meanwhile.
    const heartbeats = new Set<unknown>();
    const realSet = globalThis.setInterval;
    const realClear = globalThis.clearInterval;
    const setSpy = vi.spyOn(globalThis, 'setInterval').mockImplementation(((
      ...args: Parameters<typeof setInterval>
    ) => {
      const timer = realSet(...args);
      // Only the stream's heartbeats: the actors' own clocks start meanwhile too.
      if (args[1] === HEARTBEAT_MS) heartbeats.add(timer);
      return timer;
    }) as typeof setInterval);
    const clearSpy = vi.spyOn(globalThis, 'clearInterval').mockImplementation((timer) => {
      heartbeats.delete(timer);
      realClear(timer);
    });
    try {
      const { stream, subscriptions, open } = await serveStream({ heartbeatMs: HEARTBEAT_MS });
      const readers = [await open(), await open(), await open()];
      await Promise.all(readers.map((reader) => reader.next(() => true)));
      expect(subscriptions()).toBe(3);
      expect(stream.open).toBe(3);
      expect(heartbeats.size).toBe(3);

      for (const reader of readers) reader.close();
      await waitUntil(() => subscriptions() === 0 && stream.open === 0 && heartbeats.size === 0, {
        describe: () =>
          `subscriptions ${subscriptions()}, streams ${stream.open}, heartbeats ${heartbeats.size}`,
      });
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    }
  });

  it('refuses a stream over the cap with 503 and a reason, and takes one again once a stream closed', async () => {
    const { open } = await serveStream({ maxStreams: 2, maxPerOrigin: 2 });
    const first = await open();
    await open();
    const refused = await open();
    expect(refused.response.status).toBe(503);
    expect(refused.response.headers.get('retry-after')).toBe('10');
    expect(((await refused.response.json()) as { error: string }).error).toMatch(
      /Too many status streams are open \(2\).*GET \/status/,
    );
    first.close();
    await waitUntil(async () => {
      const again = await open();
      return again.response.status === 200;
    });
  });

  it("keeps places for the CLI's streams however many a page's origin opens", async () => {
    const { open, url } = await serveStream({ maxStreams: 4 });
    const page = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' };
    const pages = [await open(page), await open(page)];
    expect(pages.map((p) => p.response.status)).toEqual([200, 200]);
    const third = await open(page);
    expect(third.response.status).toBe(503);
    expect(((await third.response.json()) as { error: string }).error).toBe(
      `Too many status streams are open (2 for ${new URL(url).origin}): close a status page tab, or read GET /status for one snapshot.`,
    );
    // The CLI (no Origin, no Fetch Metadata) still gets its streams: `pulse guide --wait` follows one.
    const cli = [await open(), await open()];
    expect(cli.map((c) => c.response.status)).toEqual([200, 200]);
    expect((await open()).response.status, 'the global cap still holds').toBe(503);
  });
});
