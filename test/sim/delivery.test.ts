import { describe, expect, it } from 'vitest';
import { type CellConfig, runCell } from '../../sim/run-cell.js';
import { SCENARIOS } from '../../sim/scenarios.js';

/*
 * The delivery simulation on small cells: the real poller, inbox and gate on a simulated clock.
 * A window of 60 (two polls' worth in (c), more than (b)'s burst of 50) makes the seed's loss show within an hour.
 */

const small = (scenario: keyof typeof SCENARIOS, catchUp: boolean): CellConfig => ({
  perPoll: SCENARIOS[scenario].perPoll,
  firstBurst: SCENARIOS[scenario].firstBurst,
  window: 60,
  cap: 20,
  q: 0.2,
  pollMs: 300_000,
  reflectMs: 120_000,
  arrivalMs: 3_600_000,
  drainMs: 3_600_000,
  catchUp,
  maxAttempts: Number.POSITIVE_INFINITY,
  retry: 'ours',
});

describe('delivery simulation', () => {
  it.each([
    ['a', false],
    ['a', true],
    ['b', false],
    ['b', true],
  ] as const)(
    'loses nothing and delivers nothing twice in (%s) with catch-up %s',
    async (scenario, catchUp) => {
      const result = await runCell(small(scenario, catchUp), 3);
      expect(result.arrived).toBeGreaterThan(0);
      expect(result).toMatchObject({ delivered: result.arrived, loss_pct: 0, duplicates: 0, dropped: 0 });
    },
  );

  it('loses events in (c) without catch-up: items scroll out of the source before the capped poller reaches them', async () => {
    const result = await runCell(small('c', false), 3);
    expect(result.arrived).toBe(3 * 12 * 30);
    expect(result.loss_pct).toBeGreaterThan(0);
    expect(result.duplicates).toBe(0);
  });

  it('loses nothing in (c) with catch-up, and delivers nothing twice', async () => {
    const result = await runCell(small('c', true), 3);
    expect(result).toMatchObject({ delivered: result.arrived, loss_pct: 0, duplicates: 0, dead_lettered: 0 });
  });

  it("reproduces the seed's 23.6% in (c) with its window of 90, whatever q is", async () => {
    for (const q of [0, 0.5]) {
      const result = await runCell(
        { ...small('c', false), window: 90, arrivalMs: 7_200_000, drainMs: 7_200_000, q },
        1,
      );
      expect(result).toMatchObject({ arrived: 720, loss_pct: 23.6, duplicates: 0 });
    }
  });

  it('calls the thinker once per inserting poll when it never fails, not on an empty inbox', async () => {
    const result = await runCell({ ...small('a', true), q: 0 }, 2);
    expect(result.think_calls_mean).toBe(12);
  });

  /** The seed's setup for one cell (spec §6): 2 h of arrivals, 2 h to drain, window 90, 10 seeds. */
  const seedCell = (
    scenario: keyof typeof SCENARIOS,
    catchUp: boolean,
    q: number,
    retry: CellConfig['retry'] = 'ours',
  ) =>
    runCell(
      { ...small(scenario, catchUp), window: 90, arrivalMs: 7_200_000, drainMs: 7_200_000, q, retry },
      10,
    );

  it("asks as often as the seed's rule when answers fail at random, and tells as soon", async () => {
    for (const q of [0.2, 0.5]) {
      const ours = await seedCell('a', true, q);
      const seedRule = await seedCell('a', true, q, 'seed');
      expect(ours.think_calls_mean, `q = ${q}`).toBe(seedRule.think_calls_mean);
      expect(ours.latency, `q = ${q}`).toEqual(seedRule.latency);
      expect(ours).toMatchObject({ loss_pct: 0, duplicates: 0 });
    }
  });

  it("asks a dead endpoint less often than the seed's rule, and tells no event later", async () => {
    const cell: CellConfig = { ...small('a', true), q: 0, outage: { fromMs: 1_800_000, toMs: 3_600_000 } };
    const ours = await runCell(cell, 2);
    const seedRule = await runCell({ ...cell, retry: 'seed' }, 2);
    expect(ours.think_calls_mean).toBeLessThan(seedRule.think_calls_mean);
    for (const at of ['p50_s', 'p95_s', 'max_s'] as const)
      expect(ours.latency![at]).toBeLessThanOrEqual(seedRule.latency![at]);
    expect(ours).toMatchObject({ loss_pct: 0, duplicates: 0 });
  });

  it('measures latency from the first listing to the ack: the gathering alone when the thinker never fails', async () => {
    const result = await runCell({ ...small('a', true), q: 0 }, 2);
    expect(result.latency).toEqual({ p50_s: 3, p95_s: 3, max_s: 3 });
  });

  it('asks a failed thinker again at the next reflection: one failure costs one reflection interval', async () => {
    // q = 0.2 with seed 1 fails some first thoughts and no second one in a row.
    const cell = { ...small('a', true), arrivalMs: 1_200_000, drainMs: 1_200_000 };
    const ours = await runCell(cell, 1);
    const seedRule = await runCell({ ...cell, retry: 'seed' }, 1);
    expect(ours.latency, 'the same as every reflection asking again').toEqual(seedRule.latency);
    expect(ours.latency!.max_s).toBe(3 + 120);
  });

  it('judges a catch-up chain in one thought: (c) with catch-up thinks once per poll period, like the seed without it', async () => {
    const steady = await seedCell('c', true, 0);
    expect(steady).toMatchObject({ think_calls_mean: 24, loss_pct: 0, duplicates: 0 });
    const failing = await seedCell('c', true, 0.5);
    const seedWithoutCatchUp = await seedCell('c', false, 0.5);
    expect(failing.think_calls_mean).toBeLessThanOrEqual(seedWithoutCatchUp.think_calls_mean);
    expect(failing).toMatchObject({ loss_pct: 0, duplicates: 0 });
  });

  it('dead-letters events that fail maxAttempts reflections, so they count as lost', async () => {
    const result = await runCell({ ...small('a', true), q: 0.9, maxAttempts: 2 }, 2);
    expect(result.dead_lettered).toBeGreaterThan(0);
    expect(result.arrived - result.delivered).toBe(result.dead_lettered);
  });
});
