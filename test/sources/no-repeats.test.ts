import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPipeline, listedItem } from '../../harness/pipeline.js';
import { SteppedClock } from '../../harness/stepped-clock.js';
import type { ExternalItem } from '../../machines/external.js';
import { createItemAcceptor } from '../../src/effects/accept-items.js';
import { createInboxLoader } from '../../src/effects/load-inbox.js';
import { InboxFile } from '../../src/store/inbox-file.js';
import { SeenStore } from '../../src/store/seen-store.js';

/*
 * "No repeats, ever": a source that keeps listing the same open task, polled for weeks on a
 * simulated clock. The daemon's external-events path runs for real on real files in a temp
 * folder: the poller, inbox and gate machines, the acceptor, the seen store, the inbox journal
 * and its loader; a restart is a new run of all of them over the same files. Only the MCP server
 * (a list in memory), the thinker (every event urgent) and the agent (claims and acknowledges
 * every delivery at once, when it is there) are stand-ins.
 */

const DAY = 24 * 60 * 60 * 1000;
const MINUTE = 60 * 1000;
const SOURCE = 'dex';
const POLL_MS = 10 * MINUTE;
const START = Date.UTC(2026, 0, 5, 9);

const task = (itemId: string): ExternalItem => listedItem(itemId, `Task ${itemId}`);

/** When the test gives up waiting for one instant's work (file writes among it) to come to rest. */
const REST_TIMEOUT_MS = 10_000;
const realTick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

interface World {
  dir: string;
  clock: SteppedClock;
  /** What the source lists at the clock's now. */
  listing: (now: number) => ExternalItem[];
  /** Whether an agent checks in at the clock's now. */
  agentThere: (now: number) => boolean;
  /** Every delivery the agent acknowledged, as the item ids it held (copies included), in order. */
  deliveries: string[][];
}

/** One daemon run over the world's files: the poller, inbox and gate, on the world's clock. */
const startRun = async (world: World) => {
  const { clock, dir } = world;
  const now = () => clock.now();
  const seen = await SeenStore.load(join(dir, 'external_seen.jsonl'), { now: now() });
  const inboxFile = new InboxFile(join(dir, 'inbox.jsonl'), join(dir, 'dead-letters.jsonl'));
  const acceptItems = createItemAcceptor({
    inbox: inboxFile,
    seen,
    storeDetail: () => false,
    now: () => new Date(now()),
  });
  const writing = new Set<Promise<unknown>>();
  const track = <T>(promise: Promise<T>): Promise<T> => {
    writing.add(promise);
    void promise.finally(() => writing.delete(promise)).catch(() => {});
    return promise;
  };
  const pipeline = createPipeline({
    clock,
    // Provided as the wiring provides them (src/system/wiring.ts), on the simulated clock. The
    // `offerAllSeen` guard is left to its default (every offer is written): it only answers
    // at once an offer the acceptor would write nothing for.
    inbox: {
      load: () => track(createInboxLoader({ inbox: inboxFile, seen, now })()),
      accept: (input) => track(acceptItems(input)),
      persist: (input) => track(inboxFile.settle(input.settlement, input.deadLetters)),
    },
    gate: {
      input: { reflectEveryMs: 30 * MINUTE },
      think: async ({ events }) => ({
        judgements: events.map((e) => ({ id: e.id, urgency: 0.9 })),
        by: 'rules',
        note: null,
      }),
    },
    poller: {
      source: {
        name: SOURCE,
        server: 'dex',
        tool: 'list_tasks',
        args: {},
        intervalMs: POLL_MS,
        enabled: true,
      },
      fetch: async () => ({ ok: true, items: world.listing(now()), at: now(), durationMs: 0, jitter: 0 }),
    },
  });
  pipeline.start();

  const busy = () => writing.size > 0 || pipeline.busy();

  /** Lets everything due at this instant run to rest; the agent, when there, takes and acknowledges a delivery at once. */
  const rest = async () => {
    const giveUp = Date.now() + REST_TIMEOUT_MS;
    while (Date.now() < giveUp) {
      await realTick();
      if (busy()) continue;
      const taken = world.agentThere(now()) ? await pipeline.takeDelivery('agent') : null;
      if (taken === null) return;
      expect(taken.reply.accepted, 'the ack is accepted').toBe(true);
      world.deliveries.push(taken.delivery.events.map((e) => e.item_id));
    }
    throw new Error(`Nothing came to rest at day ${(now() - START) / DAY}.`);
  };

  /** Runs from timer to timer until `until`, then sets the clock there. */
  const runUntil = async (until: number) => {
    await clock.runTimersUntil(until, rest);
    clock.set(until);
    await rest();
  };

  const stop = async () => {
    await rest();
    pipeline.stop();
  };

  return { runUntil, stop, inbox: pipeline.inbox(), polls: () => pipeline.poller().getSnapshot().context };
};

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const newWorld = async (listing: World['listing'], agentThere: World['agentThere']): Promise<World> => {
  const dir = await mkdtemp(join(tmpdir(), 'pulse-no-repeats-'));
  dirs.push(dir);
  const clock = new SteppedClock();
  clock.set(START);
  return { dir, clock, listing, agentThere, deliveries: [] };
};

/** How many times each item was in an acknowledged delivery, copies within one delivery counted. */
const timesDelivered = (world: World) => {
  const counts: Record<string, number> = {};
  for (const delivery of world.deliveries) for (const id of delivery) counts[id] = (counts[id] ?? 0) + 1;
  return counts;
};

const at = (days: number) => START + days * DAY;

describe('an item a source keeps listing is delivered once', () => {
  it('over four weeks of polls every 10 minutes, across a restart and five days stopped', async () => {
    // One task listed from the start and never closed, another from day 12.
    const world = await newWorld(
      (now) => (now < at(12) ? [task('open-1')] : [task('open-1'), task('open-2')]),
      () => true,
    );
    let run = await startRun(world);
    await run.runUntil(at(9));
    expect(timesDelivered(world), 'the first nine days').toEqual({ 'open-1': 1 });
    await run.stop();

    // Stopped for five days: the restart reads what the files say.
    world.clock.set(at(14));
    run = await startRun(world);
    await run.runUntil(at(21));
    await run.stop();

    // And a plain restart.
    run = await startRun(world);
    await run.runUntil(at(28));
    expect(run.polls().polls, 'the last week was polled every 10 minutes').toBeGreaterThanOrEqual(
      (7 * DAY) / POLL_MS,
    );
    await run.stop();

    expect(timesDelivered(world), 'each task once, in four weeks').toEqual({ 'open-1': 1, 'open-2': 1 });
    expect(world.deliveries).toEqual([['open-1'], ['open-2']]);

    // The seen file holds each task once after compaction, with the time of a recent listing; the
    // server's marks (which source listed each first) are the other half of its lines.
    const all = (await readFile(join(world.dir, 'external_seen.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { k: string; t: number; s?: string });
    const rows = all.filter((row) => row.s === undefined);
    expect(all.length - rows.length, "the server's marks, as many as the source's").toBe(rows.length);
    const latest = new Map<string, number>();
    for (const row of rows) {
      const id = row.k.split('\u0000')[1]!;
      latest.set(id, Math.max(row.t, latest.get(id) ?? 0));
    }
    for (const id of ['open-1', 'open-2']) {
      expect(
        at(28) - latest.get(id)!,
        `${id}'s mark is at most a day behind its last listing`,
      ).toBeLessThanOrEqual(DAY);
    }
    expect(rows.length, 'about one line per task per day at most').toBeLessThanOrEqual(2 * 8 + 2);
  }, 120_000);

  it('when no agent checks in for ten days: the task waits out with the gate and is delivered once, not twice in one delivery', async () => {
    const world = await newWorld(
      () => [task('open-1')],
      (now) => now >= at(10),
    );
    const run = await startRun(world);
    await run.runUntil(at(9));
    expect(world.deliveries, 'nobody took it yet').toEqual([]);
    expect(run.inbox.getSnapshot().context.events.length, 'copies of the task waiting in the inbox').toBe(0);
    await run.runUntil(at(21));
    await run.stop();
    expect(world.deliveries).toEqual([['open-1']]);
  }, 120_000);
});
