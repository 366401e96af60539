import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { SystemStatus } from '../../src/system/system-status.js';
import { type RunningDaemon, waitUntil } from '../support/daemon.js';
import { type Control, fixtureCommand, fixtureFiles, startHttpFixture } from '../support/source-fixture.js';
import { saveSources } from '../support/trust.js';
import { decision, type HostileCase } from './harness.js';

// Rows where a source server is the hostile party; each gets a fresh daemon.

/** HTTP fixtures the rows started, killed after the suite. */
export const fixtureChildren: ChildProcess[] = [];

type Poller = SystemStatus['sources']['pollers'][number];

const pollerOf = async (d: RunningDaemon): Promise<Poller | undefined> => {
  const status = (await (await fetch(new URL('/status', d.url))).json()) as SystemStatus;
  return status.sources.pollers.find((p) => p.source === 'feed');
};

/** Configures one source `feed` on server `feed`, polled every second. */
const configure = (d: RunningDaemon, server: Record<string, unknown>) =>
  saveSources(
    d.project,
    JSON.stringify({
      mcpServers: { feed: server },
      sources: [{ name: 'feed', server: 'feed', tool: 'list_items', interval_sec: 1 }],
    }),
  );

const stdio = async (d: RunningDaemon, control: Control, flags: string[] = []) => {
  const files = await fixtureFiles(d.project, 'feed', control);
  return { ...fixtureCommand([...files.args, ...flags]), timeout_sec: 2 };
};

const http = async (d: RunningDaemon, control: Control) => {
  const files = await fixtureFiles(d.project, 'feed', control);
  // Long enough for a loaded machine to build the 50 MB answer: the cap, not the timeout, must stop it.
  return { url: await startHttpFixture(files.args, (child) => fixtureChildren.push(child)), timeout_sec: 30 };
};

/** The slowest of `count` calls made one after another, in ms. */
const slowestOf = async (count: number, call: () => Promise<unknown>) => {
  let slowest = 0;
  for (let i = 0; i < count; i++) {
    const started = Date.now();
    await call();
    slowest = Math.max(slowest, Date.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return slowest;
};

/** Waits for the poller's first error, while the MCP surface keeps answering fast. */
const failure = async (d: RunningDaemon, timeoutMs = 15_000) => {
  const poller = await waitUntil(
    async () => {
      const now = await pollerOf(d);
      return now?.last_error ? now : undefined;
    },
    { timeoutMs, intervalMs: 100, describe: () => 'the source failing' },
  );
  expect(await slowestOf(3, () => decision(d)), 'calls while the source misbehaves').toBeLessThan(2000);
  return poller;
};

export const sourceRows: HostileCase[] = [
  {
    name: 'a source answering 50 MB over HTTP: the poll fails at the 16 MiB answer limit, nothing is inserted',
    covered: 'test/sources/client-pool.test.ts (stdio over the SDK read buffer)',
    bug: 'an HTTP source answer had no size limit: 50 MB was read whole into the daemon (or not, by the timeout), so a larger one could exhaust its memory; now capped at 16 MiB',
    run: async (d) => {
      await configure(d, await http(d, { mode: 'huge' }));
      const poller = await failure(d, 45_000);
      expect(poller.last_error).toMatch(/server "feed".*over the 16777216-byte limit/);
      expect(poller.items_seen).toBe(0);
    },
  },
  {
    name: 'a source answering JSON nested 10,000 levels deep: taken as one untitled item, the inbox line bounded',
    run: async (d) => {
      await configure(d, await stdio(d, { mode: 'deep', depth: 10_000 }));
      let last: Poller | undefined;
      await waitUntil(
        async () => {
          last = await pollerOf(d);
          return last?.items_seen === 1;
        },
        { timeoutMs: 15_000, describe: () => `the deep item taken in (poller: ${JSON.stringify(last)})` },
      );
      const inbox = await readFile(join(d.project, '.pulse', 'inbox.jsonl'), 'utf8');
      expect(inbox).toContain('"title":"(untitled)"');
      expect(inbox.length, 'no 10,000-level detail is stored').toBeLessThan(4096);
    },
  },
  {
    name: 'a source that never answers is timed out after timeout_sec, named in the error',
    covered: 'test/e2e/sources.test.ts (HTTP); this one hangs over stdio',
    run: async (d) => {
      await configure(d, await stdio(d, { mode: 'hang' }));
      const poller = await failure(d);
      expect(poller.last_error).toMatch(
        /server "feed" did not answer "list_items" within 2 s \(timeout_sec\)/,
      );
    },
  },
  {
    name: 'a stdio source flooding stderr still delivers its items, calls stay fast, and the log says what it dropped',
    bug: 'every stderr line of a flooding source was logged, keeping the daemon busy: calls took up to 2.2 s; now 20 lines a second per server are logged and the rest counted',
    run: async (d) => {
      await configure(d, await stdio(d, { items: [{ id: 'one', title: 'One' }] }, ['--stderr-flood']));
      await waitUntil(async () => (await pollerOf(d))?.items_seen === 1, {
        timeoutMs: 15_000,
        describe: () => 'the item from the flooding server',
      });
      const slowest = await slowestOf(5, () => decision(d));
      expect(slowest, 'the slowest of 5 calls while the source floods').toBeLessThan(1000);
      expect(await readFile(join(d.project, '.pulse', 'pulse.log'), 'utf8')).toMatch(
        /more stderr lines not logged: over 20 a second/,
      );
    },
  },
  {
    name: 'a stdio source that exits at once gets a connect error saying so',
    covered: 'test/sources/client-pool.test.ts (the pool alone)',
    run: async (d) => {
      await configure(d, await stdio(d, {}, ['--exit-at-once']));
      const poller = await failure(d);
      expect(poller.last_error).toMatch(/server "feed"/);
    },
  },
];
