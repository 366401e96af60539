import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prng } from '../../sim/prng.js';
import type { SystemStatus } from '../../src/system/system-status.js';
import { type RunningDaemon, removeProject, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { readJsonLines } from '../support/files.js';
import {
  type InboxRow,
  readInbox,
  readKilledJournal,
  repeated,
  replayInbox,
} from '../support/pulse-store.js';
import { stormSeed } from '../support/random.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { saveSources } from '../support/trust.js';

/*
 * Crash safety of the sources: `kill -9` the daemon at random moments while a source's list
 * grows and the poller catches up, then check that every listed item reached the inbox once.
 */

/**
 * The journal as a kill left it: every line but the last must parse (a kill in the middle of an
 * append may tear the last one). Read before the next start compacts it.
 */
const afterKill = async (project: string) => {
  const { rows, torn, broken } = await readKilledJournal(join(project, '.pulse', 'inbox.jsonl'));
  expect(broken, 'only the last line may be torn').toEqual([]);
  return { inserted: replayInbox(rows as InboxRow[]).inserts.map((e) => e.item_id), torn };
};

const getStatus = async (daemon: RunningDaemon): Promise<SystemStatus | null> => {
  try {
    const response = await fetch(new URL('/status', daemon.url), { signal: AbortSignal.timeout(1000) });
    return (await response.json()) as SystemStatus;
  } catch {
    return null;
  }
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const running: RunningDaemon[] = [];
const projects: string[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.kill9()));
  await Promise.all(projects.splice(0).map(removeProject));
});

const setUp = async (prefix: string) => {
  const project = await tempProject(prefix);
  projects.push(project);
  await mkdir(join(project, '.pulse'));
  const feed = await fixtureFiles(project, 'feed', { items: [] });
  // setControl saves atomically, so the server never reads half a list.
  const setItems = (items: unknown[]) => feed.setControl({ items });
  await saveSources(
    project,
    JSON.stringify({
      mcpServers: { feed: fixtureCommand(feed.args) },
      sources: [{ name: 'feed', server: 'feed', tool: 'list_items', interval_sec: 1 }],
    }),
  );
  const start = async () => {
    const daemon = await startDaemon(project);
    running.push(daemon);
    return daemon;
  };
  return { project, setItems, start, calls: () => feed.calls() };
};

const item = (n: number) => ({ id: `item-${n}`, title: `Item ${n}` });

describe('sources crash safety', () => {
  it('loses no listed item and inserts none twice through kill -9 at random moments of a growing, capped source', async () => {
    const seed = stormSeed('PULSE_SOURCES_CRASH_SEED', 'sources crash storm');
    const random = prng(seed);
    const KILLS = 9;
    /** Below the inbox's capacity of 200: nothing drains the inbox in this test. */
    const TOTAL = 180;
    const { project, setItems, start, calls } = await setUp('pulse-sources-crash-');

    // The source's list grows in bursts, some over the per-tick cap of 20, while the daemon dies and restarts.
    const listed: ReturnType<typeof item>[] = [];
    const burstSizes: number[] = [];
    let growing = true;
    const growth = (async () => {
      while (growing && listed.length < TOTAL) {
        const burst = Math.min(TOTAL - listed.length, 1 + Math.floor(random() * 35));
        burstSizes.push(burst);
        for (let i = 0; i < burst; i++) listed.push(item(listed.length + 1));
        await setItems(listed);
        await sleep(500 + random() * 1500);
      }
    })();

    let kills = 0;
    let maxCatchUps = 0;
    let tornTails = 0;
    try {
      for (; kills < KILLS; kills++) {
        const daemon = await start();
        // The random moment: anywhere in a poll, an insert, a seen-marking or a catch-up wait.
        await sleep(200 + random() * 2300);
        const status = await getStatus(daemon);
        maxCatchUps = Math.max(maxCatchUps, status?.sources.pollers[0]?.catch_ups ?? 0);
        await daemon.kill9();
        running.splice(running.indexOf(daemon), 1);
        const journal = await afterKill(project);
        tornTails += journal.torn ? 1 : 0;
        expect(repeated(journal.inserted), `seed ${seed}, kill ${kills + 1}: no item inserted twice`).toEqual(
          [],
        );
      }
    } catch (error) {
      growing = false;
      throw error;
    } finally {
      await growth;
    }
    expect(listed, 'the whole list was published').toHaveLength(TOTAL);

    // The final life: let the polls finish until every listed item is in, then a few more.
    const daemon = await start();
    await waitUntil(async () => (await readInbox(project)).live.length >= TOTAL, {
      timeoutMs: 20_000,
      intervalMs: 50,
      describe: () => `all ${TOTAL} items in inbox.jsonl (seed ${seed})`,
    });
    const drainedAt = Date.now();
    await waitUntil(async () => (await calls()).filter((call) => call.at > drainedAt).length >= 2, {
      timeoutMs: 10_000,
      intervalMs: 50,
      describe: () => 'two more polls after draining',
    });
    const status = await getStatus(daemon);
    expect(await daemon.stop()).toBe(0);
    running.splice(running.indexOf(daemon), 1);

    const { inserts, live, rows } = await readInbox(project);
    const seen = await readJsonLines<{ k: string; t: number; s?: string }>(
      join(project, '.pulse', 'external_seen.jsonl'),
    );
    const wanted = listed.map((i) => i.id);
    const liveIds = live.map((e) => e.item_id);
    const lost = wanted.filter((id) => !liveIds.includes(id));
    const duplicated = [...repeated(liveIds), ...repeated(inserts.map((e) => e.item_id))];
    // One poll's inserts share their received_at.
    const perPoll = new Map<string, number>();
    for (const e of inserts) perPoll.set(e.received_at, (perPoll.get(e.received_at) ?? 0) + 1);
    const batches = [...perPoll.values()];
    console.log(
      `sources crash storm: seed ${seed}, ${kills} kills, ${TOTAL} items listed in ${burstSizes.length} bursts ` +
        `(largest ${Math.max(...burstSizes)}), ${inserts.length} inserted in ${batches.length} polls ` +
        `(${batches.filter((n) => n === 20).length} capped at 20), catch-ups seen ${Math.max(maxCatchUps, status?.sources.pollers[0]?.catch_ups ?? 0)}, ` +
        `torn tails after kills ${tornTails}, lost ${lost.length}, duplicated ${duplicated.length}`,
    );

    expect(lost, `seed ${seed}: no item lost`).toEqual([]);
    expect(duplicated, `seed ${seed}: no item inserted twice`).toEqual([]);
    expect(liveIds.sort()).toEqual([...wanted].sort());
    expect(rows.every((row) => row.op === 'insert')).toBe(true);
    expect(
      batches.every((n) => n <= 20),
      'no poll let in more than the cap',
    ).toBe(true);
    expect(
      batches.some((n) => n === 20),
      'some poll hit the cap, so catch-up was needed',
    ).toBe(true);
    expect(status?.inbox).toMatchObject({ size: TOTAL, dropped: 0 });
    expect(status?.sources.pollers[0]?.last_error).toBeNull();
    const marks = (first?: string) => new Set(seen.filter((row) => row.s === first).map((row) => row.k));
    expect(marks(), "the source's marks").toEqual(new Set(wanted.map((id) => `feed\u0000${id}`)));
    expect(marks('feed'), "its server's").toEqual(new Set(wanted.map((id) => `feed\u0000id:${id}`)));
    expect(seen.every((row) => typeof row.t === 'number')).toBe(true);
    expect(await readJsonLines(join(project, '.pulse', 'dead-letters.jsonl'))).toEqual([]);
  }, 60_000);

  it('does not let a torn last line of inbox.jsonl or external_seen.jsonl swallow the next write', async () => {
    const { project, setItems, start } = await setUp('pulse-sources-torn-');
    const old = {
      id: 'ext_old',
      source: 'feed',
      item_id: 'old',
      title: 'Old',
      starts_at: null,
      detail: null,
      received_at: '2026-01-01T00:00:00.000Z',
      attempts: 0,
    };
    // What a kill in the middle of an append leaves: a last line without its end.
    await writeFile(
      join(project, '.pulse', 'inbox.jsonl'),
      `${JSON.stringify({ op: 'insert', event: old })}\n{"op":"insert","event":{"id":"ext_torn","sou`,
    );
    await writeFile(
      join(project, '.pulse', 'external_seen.jsonl'),
      `${JSON.stringify({ k: 'feed\u0000old', t: Date.now() })}\n{"k":"feed\\u0000tor`,
    );
    await setItems([item(1), item(2)]);

    let daemon = await start();
    await waitUntil(async () => (await getStatus(daemon))?.inbox.size === 3, {
      timeoutMs: 10_000,
      intervalMs: 50,
      describe: () => 'the two new items in the inbox',
    });
    expect(await daemon.stop()).toBe(0);

    daemon = await start();
    // An answered offer means the inbox has loaded its journal.
    const status = await waitUntil(
      async () => {
        const current = await getStatus(daemon);
        return current?.sources.pollers[0]?.state === 'waiting' && current;
      },
      { timeoutMs: 10_000, intervalMs: 50, describe: () => 'a first poll answered after the restart' },
    );
    expect(status.inbox.size, 'the inbox after a restart still holds all three').toBe(3);
    expect(status.inbox.inserted, 'and nothing came in twice').toBe(0);
    const { live } = await readInbox(project);
    expect(live.map((e) => e.item_id)).toEqual(['old', 'item-1', 'item-2']);
    const seen = await readJsonLines<{ k: string; s?: string }>(
      join(project, '.pulse', 'external_seen.jsonl'),
    );
    expect(seen.map((row) => `${row.k}${row.s === undefined ? '' : ` first by ${row.s}`}`).sort()).toEqual([
      'feed\u0000id:item-1 first by feed',
      'feed\u0000id:item-2 first by feed',
      'feed\u0000item-1',
      'feed\u0000item-2',
      'feed\u0000old',
    ]);
  });
});
