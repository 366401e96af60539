import { createPipeline } from '../harness/pipeline.js';
import { SteppedClock } from '../harness/stepped-clock.js';
import { createItemAcceptor } from '../src/effects/accept-items.js';
import { createFakeSource } from './fake-source.js';
import { createFakeThinker, type Outage } from './fake-thinker.js';
import { memoryInboxFile, memorySeenStore } from './memory-stores.js';
import { prng } from './prng.js';

/** One cell of the experiment: a scenario, a failure rate and the knobs of the run. */
export interface CellConfig {
  perPoll: number;
  firstBurst: number;
  window: number;
  cap: number;
  q: number;
  pollMs: number;
  reflectMs: number;
  arrivalMs: number;
  drainMs: number;
  /** `false` reproduces the seed: a capped poll waits a whole interval, like any other. */
  catchUp: boolean;
  /** The gate's `maxAttempts` (its default is 5); `Infinity` retries without bound, as the seed does. */
  maxAttempts: number;
  /**
   * After a failed thought: `ours` asks again at the next reflection, then twice as long after each
   * failure in a row (at most 5 minutes); `seed` asks again at every reflection, as the seed does.
   */
  retry: 'ours' | 'seed';
  /** A stretch in which the thinker's endpoint is down (every call fails), if any. */
  outage?: Outage;
}

/** What one seeded run of a cell counted. */
export interface SeedResult {
  arrived: number;
  /** Distinct events that were in a delivery the agent acknowledged as told. */
  delivered: number;
  /** Events delivered (and acknowledged) more than once. */
  duplicates: number;
  /** Reflections that called the thinker. */
  thinkCalls: number;
  dropped: number;
  deadLettered: number;
  deliveries: number;
  catchUps: number;
  /** Per event told, from when its source first listed it to the ack of its first delivery, in ms. */
  latenciesMs: number[];
}

const SOURCE = 'sim';
/** Rounds of promise settling allowed at one instant before the run is declared stuck. */
const MAX_ROUNDS = 1_000;

const nextMacrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs the real poller, inbox and gate machines in one system on a simulated clock, with an
 * in-memory source, the real acceptor over in-memory stores, a seeded failing thinker, and an
 * agent that acknowledges every delivery at once as all told.
 */
export const runSeed = async (config: CellConfig, seed: number): Promise<SeedResult> => {
  const clock = new SteppedClock();
  const source = createFakeSource(
    {
      perPoll: config.perPoll,
      firstBurst: config.firstBurst,
      everyMs: config.pollMs,
      untilMs: config.arrivalMs,
    },
    config.window,
  );
  const thinker = createFakeThinker(config.q, prng(seed), config.outage);
  const acceptItems = createItemAcceptor({
    inbox: memoryInboxFile(),
    seen: memorySeenStore(),
    storeDetail: () => false,
    now: () => new Date(clock.now()),
  });
  const pipeline = createPipeline({
    clock,
    inbox: {
      // No `persist`: the experiment keeps no files, so a settlement is written as soon as it is made.
      input: { perTickCap: config.cap },
      accept: acceptItems,
    },
    gate: {
      input: {
        reflectEveryMs: config.reflectMs,
        maxAttempts: config.maxAttempts,
        cooldownMs: 0,
        // A cap of one reflection interval is the seed's rule: every reflection asks again.
        ...(config.retry === 'seed' ? { retryCapMs: config.reflectMs } : {}),
      },
      think: (input) => thinker.think(input),
    },
    poller: {
      source: {
        name: SOURCE,
        server: 'sim-server',
        tool: 'list_items',
        args: {},
        intervalMs: config.pollMs,
        enabled: true,
      },
      fetch: async () => ({
        ok: true,
        items: source.list(clock.now()),
        at: clock.now(),
        durationMs: 0,
        jitter: 0,
      }),
      // The seed has no catch-up: a capped poll waits the whole interval like any other.
      ...(config.catchUp ? {} : { delays: { catchUpDelay: ({ context }) => context.source.intervalMs } }),
    },
  });

  pipeline.start();
  const timesDelivered = new Map<string, number>();
  const latenciesMs: number[] = [];
  let deliveries = 0;

  /**
   * Lets everything due at this instant run to rest (the inbox wakes the gate after an insert),
   * and the agent claims and acknowledges a delivery at once.
   */
  const settle = async () => {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      await nextMacrotask();
      if (pipeline.busy()) continue;
      const taken = await pipeline.takeDelivery('sim-agent');
      if (taken === null) return;
      const { delivery, reply } = taken;
      if (!reply.accepted) throw new Error(`The gate refused the ack of ${delivery.deliveryId}.`);
      deliveries++;
      for (const e of delivery.events) {
        const times = (timesDelivered.get(e.item_id) ?? 0) + 1;
        timesDelivered.set(e.item_id, times);
        if (times === 1) latenciesMs.push(clock.now() - source.listedFrom(e.item_id));
      }
    }
    throw new Error(`The simulation did not come to rest at ${clock.now()} ms.`);
  };

  try {
    await clock.runTimersUntil(config.arrivalMs + config.drainMs, settle);
    const counts = [...timesDelivered.values()];
    return {
      arrived: source.arrived,
      delivered: counts.length,
      duplicates: counts.filter((n) => n > 1).length,
      thinkCalls: thinker.calls,
      dropped: pipeline.inbox().getSnapshot().context.dropped,
      deadLettered: pipeline.gate().getSnapshot().context.deadLettered,
      deliveries,
      catchUps: pipeline.poller().getSnapshot().context.catchUps,
      latenciesMs,
    };
  } finally {
    pipeline.stop();
  }
};

/** Delivery latency over a cell's events told, in seconds: the median, the 95th percentile and the longest. */
export interface Latency {
  p50_s: number;
  p95_s: number;
  max_s: number;
}

/** The nearest-rank percentile `p` (0..1) of sorted values. */
const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;

/** The latency of the events told, from their times in ms; null when none was told. */
export const latencyOf = (latenciesMs: readonly number[]): Latency | null => {
  if (latenciesMs.length === 0) return null;
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const s = (ms: number) => Math.round(ms / 1_000);
  return { p50_s: s(percentile(sorted, 0.5)), p95_s: s(percentile(sorted, 0.95)), max_s: s(sorted.at(-1)!) };
};

/** A cell's seeds summed (and think calls averaged), as the seed's table reports them, with the latency over all its seeds. */
export interface CellResult {
  arrived: number;
  delivered: number;
  loss_pct: number;
  duplicates: number;
  think_calls_mean: number;
  dropped: number;
  dead_lettered: number;
  latency: Latency | null;
}

/** Runs seeds 1..`seeds` of a cell and sums them. */
export const runCell = async (config: CellConfig, seeds: number): Promise<CellResult> => {
  const runs: SeedResult[] = [];
  for (let seed = 1; seed <= seeds; seed++) runs.push(await runSeed(config, seed));
  const sum = (pick: (r: SeedResult) => number) => runs.reduce((total, r) => total + pick(r), 0);
  const arrived = sum((r) => r.arrived);
  const delivered = sum((r) => r.delivered);
  return {
    arrived,
    delivered,
    loss_pct: arrived === 0 ? 0 : Math.round((1_000 * (arrived - delivered)) / arrived) / 10,
    duplicates: sum((r) => r.duplicates),
    think_calls_mean: Math.round((10 * sum((r) => r.thinkCalls)) / runs.length) / 10,
    dropped: sum((r) => r.dropped),
    dead_lettered: sum((r) => r.deadLettered),
    latency: latencyOf(runs.flatMap((r) => r.latenciesMs)),
  };
};
