import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { type BenchDaemon, startDaemon } from '../lib/daemon.js';
import { type GeneratedHistory, writeHistory } from '../lib/generated-history.js';
import { type Block, timeInterleaved } from '../lib/latency.js';
import { type ProcessMemory, readProcessMemory } from '../lib/process-usage.js';
import { connectSession, expectAdopted, shouldInterrupt } from '../lib/session.js';
import { measureStartup, type StartupSample } from '../lib/startup.js';
import { median, percentile, type Summary, spread, summarize } from '../lib/stats.js';

/** How much to measure. */
export interface HistoryPlan {
  /** Cold starts per history size. */
  startups: number;
  /** Untimed calls per daemon before the first round. */
  warmup: number;
  /** Rounds; each times `block` calls on every daemon, interleaved call by call, in a rotating order. */
  rounds: number;
  /** Calls per daemon in a round. */
  block: number;
}

/** What one history size measured. */
export interface SizeResult {
  history: GeneratedHistory;
  startups: StartupSample[];
  calls: Summary;
  callsPerSecond: number;
  /**
   * This size's p50 over the first size's p50, round by round (their calls alternated, so
   * drift of a shared machine cancels out): the median and the middle half of the rounds.
   */
  p50Ratio: { median: number; low: number; high: number };
  /**
   * The daemon's memory while serving: the median of its RSS readings after each round (RSS
   * moves by several MB as V8 grows and shrinks its heap), and its peak; null where /proc is missing.
   */
  memory: ProcessMemory | null;
}

const steadyMemory = (readings: readonly (ProcessMemory | null)[]): ProcessMemory | null => {
  const known = readings.filter((reading) => reading !== null);
  if (known.length === 0) return null;
  return {
    rss: median(known.map((reading) => reading.rss)),
    peakRss: Math.max(...known.map((reading) => reading.peakRss)),
  };
};

/** Size indices in round `round`'s order: each size goes first once every `count` rounds. */
const rotation = (count: number, round: number): number[] =>
  Array.from({ length: count }, (_, i) => (round + i) % count);

/**
 * Times cold starts (round-robin over the sizes), then runs one daemon per size side by side
 * and times `pulse_should_interrupt` (last seen = latest id), the daemons taking turns call by call.
 * The first history is the baseline for ratios.
 */
const measureHistorySizes = async (
  histories: readonly GeneratedHistory[],
  plan: HistoryPlan,
  progress: (line: string) => void,
): Promise<SizeResult[]> => {
  const startups: StartupSample[][] = histories.map(() => []);
  for (let rep = 0; rep < plan.startups; rep++) {
    for (const i of rotation(histories.length, rep)) {
      const { project, latestEventId } = histories[i]!;
      startups[i]!.push(await measureStartup(project, latestEventId));
    }
    progress(`startup ${rep + 1}/${plan.startups} done`);
  }

  const daemons: BenchDaemon[] = [];
  const clients: Client[] = [];
  try {
    for (const { project } of histories) {
      const daemon = await startDaemon(project);
      daemons.push(daemon);
      clients.push(await connectSession(daemon.url));
    }
    const calls = histories.map(({ latestEventId }, i) => async () => {
      expectAdopted(await shouldInterrupt(clients[i]!, latestEventId), latestEventId);
    });
    await timeInterleaved(calls, rotation(histories.length, 0), plan.warmup);
    const blocks: Block[][] = histories.map(() => []);
    const readings: (ProcessMemory | null)[][] = histories.map(() => []);
    for (let round = 0; round < plan.rounds; round++) {
      const timed = await timeInterleaved(calls, rotation(histories.length, round), plan.block);
      const memory = await Promise.all(daemons.map((daemon) => readProcessMemory(daemon.pid)));
      for (const [i, block] of timed.entries()) {
        blocks[i]!.push(block);
        readings[i]!.push(memory[i] ?? null);
      }
      if ((round + 1) % 10 === 0 || round + 1 === plan.rounds)
        progress(`calls round ${round + 1}/${plan.rounds} done`);
    }
    const baseline = blocks[0]!.map((block) => percentile(block.samples, 50));
    return histories.map((history, i) => {
      const mine = blocks[i]!;
      const elapsedMs = mine.reduce((sum, block) => sum + block.elapsedMs, 0);
      const samples = mine.flatMap((block) => block.samples);
      return {
        history,
        startups: startups[i]!,
        calls: summarize(samples),
        callsPerSecond: (samples.length / elapsedMs) * 1000,
        p50Ratio: spread(mine.map((block, round) => percentile(block.samples, 50) / baseline[round]!)),
        memory: steadyMemory(readings[i]!),
      };
    });
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    await Promise.allSettled(daemons.map((daemon) => daemon.stop()));
  }
};

/** History sizes, smallest first: the first is the baseline for every ratio. */
const SIZES = [0, 10_000, 100_000];

/** Writes a project per history size into `dir`, then measures them (see measureHistorySizes). */
export const measureHistory = async (
  dir: string,
  plan: HistoryPlan,
  progress: (line: string) => void,
): Promise<SizeResult[]> => {
  const histories: GeneratedHistory[] = [];
  for (const size of SIZES) {
    const project = join(dir, `history-${size}`);
    await mkdir(project);
    const started = performance.now();
    histories.push(await writeHistory(project, size));
    progress(`wrote ${size} events in ${Math.round(performance.now() - started)} ms`);
  }
  return measureHistorySizes(histories, plan, progress);
};
