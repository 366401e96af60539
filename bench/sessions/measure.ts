import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { abandonSession, MCP_SESSION_HEADERS } from '../../harness/mcp-session.js';
import { type BenchDaemon, startDaemon } from '../lib/daemon.js';
import { readProcessMemory } from '../lib/process-usage.js';
import { freePort, inspectFlag, inspectHeap } from './inspector-heap.js';

/** How many sessions are left behind, how long they may idle, and how many are opened at once. */
export interface SessionsPlan {
  sessions: number;
  idleSec: number;
  concurrency: number;
}

/** A daemon's memory after a full GC: resident, and the V8 heap still in use. */
export interface Memory {
  rss: number | null;
  heap: number;
}

/** What `/healthz` counts of sessions. */
interface Held {
  sessions: number;
  push_watches: number;
}

/** One daemon's memory through a crowd of abandoned sessions. */
export interface CrowdRun {
  /** Once started, after a few sessions opened and closed. */
  before: Memory;
  /** Right after the last session was opened. */
  with: Memory;
  held: Held;
  openMs: number;
}

export interface SessionsResult {
  /** `--max-sessions` as high as the crowd: every session held until it expires. */
  uncapped: CrowdRun & {
    /** From the last session opened until `/healthz` counted none. */
    expiredAfterMs: number;
    after: Memory;
    heldAfter: Held;
  };
  /** The defaults: at most 1000 held, the least recently used idle one closed for each new one. */
  defaults: CrowdRun;
}

/** Sessions opened and closed (DELETE) before the first reading, so it includes what the first sessions load and compile. */
const WARMUP_SESSIONS = 20;

const warmUp = async (url: string) => {
  for (let i = 0; i < WARMUP_SESSIONS; i++) {
    const id = await abandonSession(url);
    const closed = await fetch(url, {
      method: 'DELETE',
      headers: { ...MCP_SESSION_HEADERS, 'mcp-session-id': id },
    });
    await closed.text();
  }
};

const held = async (url: string): Promise<Held> => {
  const { sessions, push_watches } = (await (await fetch(new URL('/healthz', url))).json()) as Held;
  return { sessions, push_watches };
};

const rssOf = async (daemon: BenchDaemon) => (await readProcessMemory(daemon.pid))?.rss ?? null;

type Inspected = Awaited<ReturnType<typeof inspectHeap>>;

/** After a full GC: an idle daemon may not collect for minutes, and RSS would count garbage. */
const memoryOf = async (daemon: BenchDaemon, inspector: Inspected): Promise<Memory> => {
  const heap = await inspector.heapAfterGc();
  return { rss: await rssOf(daemon), heap };
};

/** Starts a daemon and measures it before and right after `plan.sessions` sessions were abandoned. */
const crowd = async (
  dir: string,
  startArgs: string[],
  plan: SessionsPlan,
  progress: (line: string) => void,
): Promise<{ daemon: BenchDaemon; inspector: Inspected; run: CrowdRun }> => {
  await mkdir(dir);
  const port = await freePort();
  const daemon = await startDaemon(dir, { nodeArgs: [inspectFlag(port)], startArgs });
  const inspector = await inspectHeap(port);
  await warmUp(daemon.url);
  const before = await memoryOf(daemon, inspector);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: plan.concurrency }, async () => {
      while (next < plan.sessions) {
        next++;
        await abandonSession(daemon.url);
      }
    }),
  );
  const openMs = performance.now() - started;
  const run = {
    before,
    with: await memoryOf(daemon, inspector),
    held: await held(daemon.url),
    openMs,
  };
  progress(
    `${startArgs.join(' ') || 'defaults'}: ${plan.sessions} sessions opened in ${Math.round(openMs)} ms`,
  );
  return { daemon, inspector, run };
};

const stop = async ({ daemon, inspector }: { daemon: BenchDaemon; inspector: Inspected }) => {
  inspector.close();
  await daemon.stop();
};

/**
 * Leaves `plan.sessions` MCP sessions behind the way killed agents do (initialized, never
 * closed, no stream open), on a daemon that holds them all until they idle out and on one with
 * the default cap, and reads the daemon's memory before, with them, and after expiry.
 */
export const measureAbandonedSessions = async (
  dir: string,
  plan: SessionsPlan,
  progress: (line: string) => void,
): Promise<SessionsResult> => {
  const idle = ['--max-sessions', String(plan.sessions), '--session-idle', `${plan.idleSec}s`];
  const uncapped = await crowd(join(dir, 'uncapped'), idle, plan, progress);
  let expiredAfterMs: number;
  try {
    const opened = performance.now();
    const limitMs = (plan.idleSec + 60) * 1000;
    while ((await held(uncapped.daemon.url)).sessions > 0) {
      if (performance.now() - opened > limitMs) throw new Error(`sessions still held after ${limitMs} ms`);
      await sleep(500);
    }
    expiredAfterMs = performance.now() - opened;
    progress(`expired ${Math.round(expiredAfterMs / 1000)} s after the last was opened`);
  } catch (error) {
    await stop(uncapped);
    throw error;
  }
  const after = {
    expiredAfterMs,
    after: await memoryOf(uncapped.daemon, uncapped.inspector),
    heldAfter: await held(uncapped.daemon.url),
  };
  await stop(uncapped);
  const defaults = await crowd(join(dir, 'defaults'), [], plan, progress);
  await stop(defaults);
  return { uncapped: { ...uncapped.run, ...after }, defaults: defaults.run };
};
