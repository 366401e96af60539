import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BenchDaemon, startDaemon } from './daemon.js';
import { waitForStatus } from './daemon-status.js';
import { type FixtureServer, startFixtureServer } from './fixture-server.js';
import { type LoopFigures, loopMonitorArgs, startLoopWindow } from './loop-delay.js';
import { readProcessMemory } from './process-usage.js';
import { writeSourcesProject } from './sources-project.js';
import { startUsageWindow, type WindowUsage } from './usage-window.js';

export interface IdlePlan {
  /** Sources in the second daemon. */
  sources: number;
  intervalSec: number;
  /** After the first polls, before the window. */
  settleMs: number;
  windowMs: number;
}

/** One idle daemon: its RSS once it announced its endpoint, and its use over the window. */
export interface IdleDaemon {
  rssAtStart: number | null;
  usage: WindowUsage;
}

export interface IdleResult {
  windowMs: number;
  none: IdleDaemon;
  sources: IdleDaemon;
  /** `process.memoryUsage()` inside a third daemon, like the first but with the loop monitor preloaded. */
  memory: LoopFigures['memory'];
}

const FIRST_POLLS_LIMIT_MS = 30_000;

/**
 * Three daemons side by side, none of them called: one with no sources, one with `sources`
 * sources every `intervalSec` on the fixture server (once each has polled), and one like the
 * first with a preloaded monitor that reports its memory breakdown. Measures the first two's
 * CPU and RSS over the same window.
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
    const projects = { none: join(dir, 'none'), sources: join(dir, 'sources'), probe: join(dir, 'probe') };
    await mkdir(projects.none);
    await mkdir(projects.probe);
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
      return { daemon, rssAtStart: (await readProcessMemory(daemon.pid))?.rss ?? null };
    };
    const none = await start(projects.none);
    const sources = await start(projects.sources);
    const loopFile = join(dir, 'probe-loop.json');
    const probe = await start(projects.probe, loopMonitorArgs(loopFile));
    await waitForStatus(
      sources.daemon.url,
      (s) => s.sources.pollers.length === plan.sources && s.sources.pollers.every((p) => p.last_poll_at),
      { limitMs: FIRST_POLLS_LIMIT_MS, what: `all ${plan.sources} sources polled once` },
    );
    progress(`all ${plan.sources} sources polled once; settling ${plan.settleMs / 1000} s`);
    await sleep(plan.settleMs);
    const windows = [await startUsageWindow(none.daemon.pid), await startUsageWindow(sources.daemon.pid)];
    const loop = startLoopWindow(probe.daemon.pid, loopFile);
    const started = performance.now();
    progress(`measuring for ${plan.windowMs / 1000} s`);
    await sleep(plan.windowMs);
    const [noneUsage, sourcesUsage] = await Promise.all(windows.map((w) => w.finish()));
    const windowMs = performance.now() - started;
    const { memory } = await loop.finish();
    return {
      windowMs,
      none: { rssAtStart: none.rssAtStart, usage: noneUsage! },
      sources: { rssAtStart: sources.rssAtStart, usage: sourcesUsage! },
      memory,
    };
  } finally {
    await Promise.allSettled(daemons.map((daemon) => daemon.stop()));
    await fixture?.stop();
  }
};
