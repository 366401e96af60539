import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/client';
import { startReadyChild } from '../lib/child-process.js';
import { type BenchDaemon, BUNDLED, startDaemon } from '../lib/daemon.js';
import { timeInterleaved } from '../lib/latency.js';
import { connectSession, shouldInterrupt } from '../lib/session.js';
import { median } from '../lib/stats.js';
import { startUsageWindow, type WindowUsage } from '../lib/usage-window.js';

/** How many projects, how many calls, and how long the idle window is. */
export interface ProjectsPlan {
  projects: number;
  warmup: number;
  rounds: number;
  block: number;
  /** After the warm-up, before the idle window: the calls' garbage and timers settle. */
  settleMs: number;
  windowMs: number;
}

/** One way of serving: its processes' summed use over the idle window, and its calls' p50. */
export interface Serving {
  processes: number;
  /** Summed over its processes: median RSS in the window, CPU time in it. */
  rss: number | null;
  cpuMs: number | null;
  cpuPercent: number | null;
  /** CPU time of every thread in the window (schedstat), the figure the idle target is judged on. */
  runMs: number | null;
  /** `pulse_should_interrupt` round trips, ms: the median over every call. */
  p50: number;
  calls: number;
}

export interface ProjectsResult {
  single: Serving;
  shared: Serving;
  separate: Serving;
  windowMs: number;
}

/** `pulse start -p DIR --port PORT` while a daemon serves the port: it adds DIR there and exits. */
const joinDaemon = async (dir: string, port: number): Promise<string> => {
  const child = await startReadyChild(
    `pulse start on ${dir} (joining port ${port})`,
    [...BUNDLED.args, 'start', '--project', dir, '--port', String(port)],
    { ready: /MCP endpoint: (\S+)/, limitMs: 60_000 },
  );
  return child.announced;
};

const sum = (values: ReadonlyArray<number | null>): number | null =>
  values.some((v) => v === null) ? null : values.reduce<number>((a, v) => a + (v ?? 0), 0);

const summed = (usage: readonly WindowUsage[]) => ({
  rss: sum(usage.map((u) => u.rss)),
  cpuMs: sum(usage.map((u) => u.cpuMs)),
  cpuPercent: sum(usage.map((u) => u.cpuPercent)),
  runMs: sum(usage.map((u) => u.runMs)),
});

/**
 * One daemon serving `plan.projects` projects, beside as many one-project daemons and beside one
 * daemon of one project, in one run: each served project has an MCP session; after a warm-up,
 * the idle window reads every process's RSS and CPU time; then `pulse_should_interrupt` calls are
 * timed interleaved (the shared daemon's rotating over its projects), so load falls on all alike.
 */
export const measureProjects = async (
  dir: string,
  plan: ProjectsPlan,
  progress: (line: string) => void,
): Promise<ProjectsResult> => {
  const folder = async (name: string) => {
    const path = join(dir, name);
    await mkdir(path);
    return path;
  };
  const daemons: BenchDaemon[] = [];
  const clients: Client[] = [];
  const connect = async (url: string) => {
    const client = await connectSession(url);
    clients.push(client);
    return client;
  };
  try {
    const single = await startDaemon(await folder('single'));
    daemons.push(single);
    const shared = await startDaemon(await folder('shared-0'));
    daemons.push(shared);
    const sharedUrls = [shared.url];
    const port = Number(new URL(shared.url).port);
    for (let i = 1; i < plan.projects; i++)
      sharedUrls.push(await joinDaemon(await folder(`shared-${i}`), port));
    const separate: BenchDaemon[] = [];
    for (let i = 0; i < plan.projects; i++) separate.push(await startDaemon(await folder(`separate-${i}`)));
    daemons.push(...separate);
    progress(`started: one daemon of 1 project, one of ${plan.projects}, and ${plan.projects} of 1`);
    const singleClient = await connect(single.url);
    const sharedClients = await Promise.all(sharedUrls.map(connect));
    const separateClients = await Promise.all(separate.map((d) => connect(d.url)));
    const call = (client: Client) => () => shouldInterrupt(client, null);
    let turn = 0;
    const sharedCall = () => call(sharedClients[turn++ % sharedClients.length]!)();
    let other = 0;
    const separateCall = () => call(separateClients[other++ % separateClients.length]!)();
    const calls = [call(singleClient), sharedCall, separateCall];
    await timeInterleaved(calls, [0, 1, 2], plan.warmup);
    await sleep(plan.settleMs);
    progress(`idle window of ${plan.windowMs / 1000} s on ${daemons.length} processes`);
    const windows = await Promise.all(daemons.map((d) => startUsageWindow(d.pid)));
    await sleep(plan.windowMs);
    const usage = await Promise.all(windows.map((w) => w.finish()));
    const samples: number[][] = [[], [], []];
    for (let round = 0; round < plan.rounds; round++) {
      const order = [round % 3, (round + 1) % 3, (round + 2) % 3];
      const blocks = await timeInterleaved(calls, order, plan.block);
      for (const [i, block] of blocks.entries()) samples[i]!.push(...block.samples);
    }
    const serving = (processes: readonly WindowUsage[], i: number): Serving => ({
      processes: processes.length,
      ...summed(processes),
      p50: median(samples[i]!),
      calls: samples[i]!.length,
    });
    return {
      single: serving([usage[0]!], 0),
      shared: serving([usage[1]!], 1),
      separate: serving(usage.slice(2), 2),
      windowMs: plan.windowMs,
    };
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    // The shared daemon ends with its first project's SIGTERM, every project in order.
    await Promise.all(daemons.map((d) => d.stop()));
  }
};
