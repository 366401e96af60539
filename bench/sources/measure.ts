import { mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { SystemStatus } from '../../src/system/system-status.js';
import { type BenchDaemon, startDaemon } from '../lib/daemon.js';
import { readStatus, waitForStatus } from '../lib/daemon-status.js';
import { type FixtureServer, readRecordedCalls, startFixtureServer } from '../lib/fixture-server.js';
import { type LoopFigures, type LoopWindow, loopMonitorArgs, startLoopWindow } from '../lib/loop-delay.js';
import { TOOL, writeSourcesProject } from '../lib/sources-project.js';
import { startUsageWindow, type UsageWindow, type WindowUsage } from '../lib/usage-window.js';
import { type FixtureProbe, startFixtureProbe } from './fixture-probe.js';
import { analyseSchedule, type PollTime, type ScheduleResult } from './schedule.js';

/** How much to measure. */
export interface SourcesPlan {
  /** Sources in the loaded daemon, all on the one fixture server. */
  sources: number;
  /** Every source's `interval_sec`. */
  intervalSec: number;
  /** Items each poll lists: the same few ids every time, new to each source once. */
  itemsPerSource: number;
  /** After every poller has polled once, how long to let the daemon settle before measuring. */
  warmupMs: number;
  /** The measurement window. */
  windowMs: number;
  /** The bench's own call to the fixture, timing its answers, runs this often during the window. */
  probeEveryMs: number;
}

/** What the daemon's `/status` said about its pollers over the window. */
export interface PollerReport {
  pollers: number;
  /** Polls the daemon counted in the window (`polls` after minus before, over all pollers). */
  polls: number;
  /** Pollers whose last poll failed, at the end of the window. */
  failing: number;
  /** Distinct last errors at the end, for the log. */
  errors: string[];
  catchUps: number;
  inbox: { size: number; capacity: number };
}

/** What a many-sources run measured. */
export interface SourcesResult {
  plan: SourcesPlan;
  /** The window as it ran, in ms. */
  windowMs: number;
  /** The machine's one-minute load average when the window began and when it ended. */
  loadAverage: { start: number; end: number };
  /** The daemon with no sources, measured over the same window. */
  idle: WindowUsage;
  /** The daemon with `plan.sources` sources. */
  loaded: WindowUsage;
  /** The fixture server that answers every poll. */
  fixture: WindowUsage;
  /** Event-loop delay and GC pauses inside each daemon over the window. */
  loop: { idle: LoopFigures; loaded: LoopFigures };
  schedule: ScheduleResult;
  /** Round trips of the bench's probe calls to the fixture during the window, in ms. */
  probe: number[];
  pollers: PollerReport;
  /** Extra `node` arguments the loaded daemon ran with (see `profilingArgs`); empty in a plain run. */
  profilingArgs: string[];
}

/**
 * Extra `node` arguments for the loaded daemon, to profile it: `PULSE_BENCH_CPU_PROF=<dir>` runs it
 * under `--cpu-prof` (the profile is written to `<dir>` when it exits; summarise it with
 * `node dist/bench/lib/cpu-profile-summary.js`), `PULSE_BENCH_DAEMON_ARGS` adds any others
 * (space-separated, e.g. `--heap-prof --heap-prof-dir=/tmp/heap`).
 */
export const profilingArgs = (env: NodeJS.ProcessEnv = process.env): string[] => [
  ...(env.PULSE_BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', env.PULSE_BENCH_CPU_PROF] : []),
  ...(env.PULSE_BENCH_DAEMON_ARGS ?? '').split(/\s+/).filter(Boolean),
];

/** Longest wait for every poller's first poll. */
const FIRST_POLLS_LIMIT_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const itemsOf = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: `item-${i}`, title: `Bench item ${i}` }));

const pollerReport = (before: SystemStatus, after: SystemStatus): PollerReport => {
  const polls = (status: SystemStatus) => status.sources.pollers.reduce((sum, p) => sum + p.polls, 0);
  const pollers = after.sources.pollers;
  return {
    pollers: pollers.length,
    polls: polls(after) - polls(before),
    failing: pollers.filter((p) => p.last_error !== null).length,
    errors: [...new Set(pollers.flatMap((p) => (p.last_error === null ? [] : [p.last_error])))],
    catchUps: pollers.reduce((sum, p) => sum + p.catch_ups, 0),
    inbox: { size: after.inbox.size, capacity: after.inbox.capacity },
  };
};

/**
 * Runs one fixture server and two daemons side by side, one with `plan.sources` sources
 * polling the fixture and one with none; once every source has polled and the warm-up has
 * passed, measures both daemons' CPU and RSS over the same window, and reads each source's
 * schedule from the calls the fixture recorded.
 */
export const measureManySources = async (
  dir: string,
  plan: SourcesPlan,
  progress: (line: string) => void,
): Promise<SourcesResult> => {
  progress(`${plan.sources} sources every ${plan.intervalSec} s on one fixture server, and an idle daemon`);
  const intervalMs = plan.intervalSec * 1000;
  const profiling = profilingArgs();
  let fixture: FixtureServer | null = null;
  const daemons: BenchDaemon[] = [];
  const windows: UsageWindow[] = [];
  const loops: LoopWindow[] = [];
  let probe: FixtureProbe | null = null;
  try {
    const fixtureDir = join(dir, 'fixture');
    await mkdir(fixtureDir);
    fixture = await startFixtureServer(fixtureDir, { items: itemsOf(plan.itemsPerSource) });
    const projects = { idle: join(dir, 'idle'), loaded: join(dir, 'loaded') };
    for (const [name, count] of [
      ['idle', 0],
      ['loaded', plan.sources],
    ] as const) {
      await mkdir(projects[name]);
      await writeSourcesProject(projects[name], { url: fixture.url, count, intervalSec: plan.intervalSec });
    }

    const loopFiles = { idle: join(dir, 'idle-loop.json'), loaded: join(dir, 'loaded-loop.json') };
    const idle = await startDaemon(projects.idle, { nodeArgs: loopMonitorArgs(loopFiles.idle) });
    daemons.push(idle);
    if (profiling.length > 0) progress(`the loaded daemon runs with node ${profiling.join(' ')}`);
    const loaded = await startDaemon(projects.loaded, {
      nodeArgs: [...loopMonitorArgs(loopFiles.loaded), ...profiling],
    });
    daemons.push(loaded);
    const started = performance.now();
    await waitForStatus(
      loaded.url,
      (s) => s.sources.pollers.length === plan.sources && s.sources.pollers.every((p) => p.last_poll_at),
      { limitMs: FIRST_POLLS_LIMIT_MS, what: `all ${plan.sources} sources polled once` },
    );
    const idleStatus = await readStatus(idle.url);
    if (idleStatus.sources.pollers.length !== 0)
      throw new Error(`The idle daemon runs ${idleStatus.sources.pollers.length} pollers, expected none.`);
    progress(
      `all ${plan.sources} sources polled once after ${Math.round(performance.now() - started)} ms; warming up ${plan.warmupMs / 1000} s`,
    );
    await sleep(plan.warmupMs);

    const before = await readStatus(loaded.url);
    const start = Date.now();
    const windowStarted = performance.now();
    const loadAtStart = loadavg()[0] ?? 0;
    for (const pid of [idle.pid, loaded.pid, fixture.pid]) windows.push(await startUsageWindow(pid));
    loops.push(startLoopWindow(idle.pid, loopFiles.idle), startLoopWindow(loaded.pid, loopFiles.loaded));
    probe = await startFixtureProbe(fixture.url, {
      tool: TOOL,
      args: { probe: true },
      everyMs: plan.probeEveryMs,
    });
    progress(`measuring for ${plan.windowMs / 1000} s`);
    await sleep(plan.windowMs);
    const end = Date.now();
    const windowMs = performance.now() - windowStarted;
    const loadAverage = { start: loadAtStart, end: loadavg()[0] ?? 0 };
    const probeSamples = await probe.stop();
    probe = null;
    const [idleUsage, loadedUsage, fixtureUsage] = await Promise.all(windows.map((w) => w.finish()));
    windows.length = 0;
    const [idleLoop, loadedLoop] = await Promise.all(loops.map((w) => w.finish()));
    loops.length = 0;
    const after = await readStatus(loaded.url);

    await Promise.all(daemons.map((daemon) => daemon.stop()));
    daemons.length = 0;
    await fixture.stop();
    const polls: PollTime[] = [];
    for (const call of await readRecordedCalls(fixture.recordPath)) {
      if (typeof call.args.n === 'number')
        polls.push({ source: call.args.n, at: call.at, answeredAt: call.answeredAt });
    }
    fixture = null;
    const schedule = analyseSchedule(
      polls,
      Array.from({ length: plan.sources }, (_, n) => n),
      { start, end, intervalMs },
    );
    const pollers = pollerReport(before, after);
    if (pollers.errors.length > 0) progress(`poll errors: ${pollers.errors.join(' | ')}`);
    return {
      plan,
      windowMs,
      loadAverage,
      idle: idleUsage!,
      loaded: loadedUsage!,
      fixture: fixtureUsage!,
      loop: { idle: idleLoop!, loaded: loadedLoop! },
      schedule,
      probe: probeSamples,
      pollers,
      profilingArgs: profiling,
    };
  } finally {
    await Promise.allSettled(windows.map((w) => w.finish()));
    await probe?.stop().catch(() => {});
    await Promise.allSettled(daemons.map((daemon) => daemon.stop()));
    await fixture?.stop();
  }
};
