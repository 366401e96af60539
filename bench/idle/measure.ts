import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type BenchDaemon, startDaemon } from '../lib/daemon.js';
import { waitForStatus } from '../lib/daemon-status.js';
import { type FixtureServer, startFixtureServer } from '../lib/fixture-server.js';
import { type LoopFigures, loopMonitorArgs, startLoopWindow } from '../lib/loop-delay.js';
import { readProcessMemory } from '../lib/process-usage.js';
import { writeSourcesProject } from '../lib/sources-project.js';
import { startUsageWindow, type WindowUsage } from '../lib/usage-window.js';
import type { ImportCosts } from './import-cost.js';
import { type ReducerPlan, type ReducerRun, TRACE_GC, watchMemoryReducer } from './memory-reducer.js';

export interface IdlePlan {
  /** Sources in the second daemon. */
  sources: number;
  intervalSec: number;
  /** After the first polls, the window waits until V8's memory reducer has run in every measured daemon. */
  reducer: ReducerPlan;
  windowMs: number;
}

/** One idle daemon: its RSS once it announced its endpoint, when its memory reducer ran, and its use over the window. */
export interface IdleDaemon {
  rssAtStart: number | null;
  reducer: ReducerRun;
  usage: WindowUsage;
}

const run = promisify(execFile);

/** What the daemon without sources loads, roughly in its order; its own modules last (they import the rest). */
const DAEMON_MODULES = [
  'zod',
  'xstate',
  'hono',
  '@hono/node-server',
  '@modelcontextprotocol/sdk/server/mcp.js',
  '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js',
  'pino',
  'write-file-atomic',
  'commander',
  fileURLToPath(new URL('../../src/daemon/daemon.js', import.meta.url)),
];
const IMPORT_COST = fileURLToPath(new URL('./import-cost.js', import.meta.url));

/** Loads the daemon's modules one by one in a fresh Node and reports what each added to its memory. */
const measureImportCosts = async (): Promise<ImportCosts> => {
  const { stdout } = await run(process.execPath, ['--expose-gc', IMPORT_COST, ...DAEMON_MODULES]);
  return JSON.parse(stdout) as ImportCosts;
};

export interface IdleResult {
  /** The memory profile: what loading each package costs. */
  imports: ImportCosts;
  windowMs: number;
  none: IdleDaemon;
  sources: IdleDaemon;
  /** `process.memoryUsage()` inside a third daemon, like the first but with the loop monitor preloaded. */
  memory: LoopFigures['memory'];
  /** A fourth, like the first but run with SMALL_YOUNG_GENERATION: what a smaller young generation saves. */
  smallYoung: IdleDaemon;
  /** From the first daemon's spawn to the start of the window. */
  windowStartMs: number;
}

/** V8's young generation is sized for throughput by default; at 1 MB per semi-space it holds far less. */
export const SMALL_YOUNG_GENERATION = '--max-semi-space-size=1';

const FIRST_POLLS_LIMIT_MS = 30_000;

/**
 * Four daemons side by side, none of them called: one with no sources, one with `sources`
 * sources every `intervalSec` on the fixture server (once each has polled), one like the first
 * with a preloaded monitor that reports its memory breakdown, and one like the first with a
 * smaller young generation. Once V8's memory reducer has run in the three measured (their start-up over),
 * measures CPU and RSS over the same window; then, in a fresh Node, what loading each of the
 * daemon's packages costs.
 */
export const measureIdle = async (
  dir: string,
  plan: IdlePlan,
  progress: (line: string) => void,
): Promise<IdleResult> => {
  let fixture: FixtureServer | null = null;
  const daemons: BenchDaemon[] = [];
  try {
    const fixtureDir = join(dir, 'fixture');
    await mkdir(fixtureDir, { recursive: true });
    fixture = await startFixtureServer(fixtureDir, { items: [] });
    const projects = {
      none: join(dir, 'none'),
      sources: join(dir, 'sources'),
      probe: join(dir, 'probe'),
      smallYoung: join(dir, 'small-young'),
    };
    await mkdir(projects.none);
    await mkdir(projects.probe);
    await mkdir(projects.smallYoung);
    await mkdir(projects.sources);
    await writeSourcesProject(projects.sources, {
      url: fixture.url,
      count: plan.sources,
      intervalSec: plan.intervalSec,
    });
    const startArgs = ['--log-level', 'warn'];
    const start = async (project: string, nodeArgs: string[] = []) => {
      const daemon = await startDaemon(project, { startArgs, nodeArgs });
      daemons.push(daemon);
      const reducer = watchMemoryReducer(daemon.stdout, daemon.spawnedAt);
      return { daemon, reducer, rssAtStart: (await readProcessMemory(daemon.pid))?.rss ?? null };
    };
    const none = await start(projects.none, [TRACE_GC]);
    const sources = await start(projects.sources, [TRACE_GC]);
    const loopFile = join(dir, 'probe-loop.json');
    const probe = await start(projects.probe, loopMonitorArgs(loopFile));
    const smallYoung = await start(projects.smallYoung, [TRACE_GC, SMALL_YOUNG_GENERATION]);
    await waitForStatus(
      sources.daemon.url,
      (s) => s.sources.pollers.length === plan.sources && s.sources.pollers.every((p) => p.last_poll_at),
      { limitMs: FIRST_POLLS_LIMIT_MS, what: `all ${plan.sources} sources polled once` },
    );
    progress(
      `all ${plan.sources} sources polled once; waiting for V8's memory reducer to run in each daemon`,
    );
    const [noneReducer, sourcesReducer, smallYoungReducer] = await Promise.all(
      [none, sources, smallYoung].map((d) => d.reducer.done(plan.reducer)),
    );
    const windowStartMs = performance.now() - none.daemon.spawnedAt;
    const windows = [none, sources, smallYoung].map((d) => startUsageWindow(d.daemon.pid));
    const loop = startLoopWindow(probe.daemon.pid, loopFile);
    const started = performance.now();
    progress(`measuring for ${plan.windowMs / 1000} s`);
    await sleep(plan.windowMs);
    const [noneUsage, sourcesUsage, smallYoungUsage] = await Promise.all(
      windows.map(async (w) => (await w).finish()),
    );
    const windowMs = performance.now() - started;
    const { memory } = await loop.finish();
    return {
      imports: await measureImportCosts(),
      windowMs,
      none: { rssAtStart: none.rssAtStart, reducer: noneReducer!, usage: noneUsage! },
      sources: { rssAtStart: sources.rssAtStart, reducer: sourcesReducer!, usage: sourcesUsage! },
      memory,
      smallYoung: { rssAtStart: smallYoung.rssAtStart, reducer: smallYoungReducer!, usage: smallYoungUsage! },
      windowStartMs,
    };
  } finally {
    await Promise.allSettled(daemons.map((daemon) => daemon.stop()));
    await fixture?.stop();
  }
};
