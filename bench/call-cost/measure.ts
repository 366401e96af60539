import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { PULSE_FILES } from '../../machines/pulse-files.js';
import type { InterruptAnswer } from '../../src/mcp/should-interrupt.js';
import { RACY_WINDOW_MS } from '../../src/store/read-tracked-file.js';
import { type ReadyChild, startReadyChild } from '../lib/child-process.js';
import { type BenchDaemon, startDaemon } from '../lib/daemon.js';
import { type Block, timeInterleaved } from '../lib/latency.js';
import { connectSession, shouldInterrupt } from '../lib/session.js';
import { percentile, type Summary, spread, summarize } from '../lib/stats.js';

/** The floor server, beside this file in dist/bench/call-cost/. */
const FLOOR = fileURLToPath(new URL('./floor-server.js', import.meta.url));

/** How much to measure. */
export interface CallCostPlan {
  /** Untimed calls per server and way of calling before the first round. */
  warmup: number;
  rounds: number;
  /** Calls per server in a round, per client. */
  block: number;
  /** Session clients calling at once in the concurrent case. */
  concurrency: number;
}

/** One way of calling, measured on both servers. */
export interface CallCase {
  name: string;
  daemon: Summary & { callsPerSecond: number };
  floor: Summary & { callsPerSecond: number };
  /** Daemon over floor, round by round: the median and the middle half. */
  p50Ratio: ReturnType<typeof spread>;
  throughputRatio: ReturnType<typeof spread>;
}

/** A JSON-RPC `tools/call` POST with no session, as a curl script sends; an error throws. */
const oneShotCall = async (url: string, lastSeenEventId: string | null): Promise<void> => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'pulse_should_interrupt', arguments: { last_seen_event_id: lastSeenEventId } },
    }),
  });
  const body = (await response.json()) as { result?: { isError?: boolean } };
  if (!response.ok || body.result === undefined || body.result.isError)
    throw new Error(`one-shot call to ${url} failed: ${response.status} ${JSON.stringify(body)}`);
};

/**
 * Waits until the protocol files the daemon just created are older than the racy window: until
 * then every call hashes them again (src/store/read-tracked-file.ts), which is what a call
 * costs in the seconds after an edit, not while the files are still (edit-to-agent times that).
 */
const waitUntilFilesSettled = async (project: string): Promise<void> => {
  const mtimes = await Promise.all(
    PULSE_FILES.map((name) =>
      stat(join(project, '.pulse', name)).then(
        (s) => s.mtimeMs,
        () => 0,
      ),
    ),
  );
  const wait = Math.max(...mtimes) + RACY_WINDOW_MS + 100 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
};

/** `concurrency` clients each making `count` calls at once; every call timed, the whole block too. */
const timeConcurrent = async (clients: readonly Client[], count: number, last: string | null) => {
  globalThis.gc?.();
  const samples: number[] = [];
  const started = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      for (let n = 0; n < count; n++) {
        const before = performance.now();
        await shouldInterrupt(client, last);
        samples.push(performance.now() - before);
      }
    }),
  );
  return { samples, elapsedMs: performance.now() - started };
};

interface Rounds {
  daemon: Block[];
  floor: Block[];
}

const caseOf = (name: string, { daemon, floor }: Rounds): CallCase => {
  const side = (blocks: Block[]) => {
    const samples = blocks.flatMap((b) => b.samples);
    const elapsed = blocks.reduce((sum, b) => sum + b.elapsedMs, 0);
    return { ...summarize(samples), callsPerSecond: (samples.length / elapsed) * 1000 };
  };
  const rate = (b: Block) => b.samples.length / b.elapsedMs;
  return {
    name,
    daemon: side(daemon),
    floor: side(floor),
    p50Ratio: spread(daemon.map((b, i) => percentile(b.samples, 50) / percentile(floor[i]!.samples, 50))),
    throughputRatio: spread(daemon.map((b, i) => rate(b) / rate(floor[i]!))),
  };
};

/**
 * Starts the real daemon on `project` and the floor beside it (answering the daemon's own
 * answer), then times `pulse_should_interrupt` on both, round by round: one session client
 * (calls alternating between the servers one by one), `concurrency` session clients at once
 * (whole blocks alternating, the first server changing each round), and one-shot POSTs.
 */
export const measureCallCost = async (
  project: string,
  plan: CallCostPlan,
  progress: (line: string) => void,
): Promise<CallCase[]> => {
  let daemon: BenchDaemon | null = null;
  let floor: ReadyChild | null = null;
  const clients: Client[] = [];
  try {
    daemon = await startDaemon(project, { startArgs: ['--log-level', 'warn'] });
    await waitUntilFilesSettled(project);
    const probe = await connectSession(daemon.url);
    clients.push(probe);
    const answer: InterruptAnswer = await shouldInterrupt(probe, null);
    const last = answer.latest_event_id;
    const answerPath = join(project, 'floor-answer.json');
    await writeFile(answerPath, JSON.stringify(await shouldInterrupt(probe, last)));
    floor = await startReadyChild('floor server', [FLOOR, answerPath], {
      ready: /FLOOR (\S+)/,
      limitMs: 30_000,
    });
    const urls = { daemon: daemon.url, floor: floor.announced };
    const connectMany = async (url: string) => {
      const many = await Promise.all(Array.from({ length: plan.concurrency }, () => connectSession(url)));
      clients.push(...many);
      return many;
    };
    const pool = { daemon: await connectMany(urls.daemon), floor: await connectMany(urls.floor) };
    const single = [pool.daemon[0]!, pool.floor[0]!];
    const sequential = single.map((client) => () => shouldInterrupt(client, last));
    const oneShots = [urls.daemon, urls.floor].map((url) => () => oneShotCall(url, last));

    await timeInterleaved(sequential, [0, 1], plan.warmup);
    await timeInterleaved(oneShots, [0, 1], plan.warmup);
    await timeConcurrent(pool.daemon, Math.ceil(plan.warmup / plan.concurrency), last);
    await timeConcurrent(pool.floor, Math.ceil(plan.warmup / plan.concurrency), last);

    const session: Rounds = { daemon: [], floor: [] };
    const concurrent: Rounds = { daemon: [], floor: [] };
    const oneShot: Rounds = { daemon: [], floor: [] };
    for (let round = 0; round < plan.rounds; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      const [d1, f1] = await timeInterleaved(sequential, order, plan.block);
      session.daemon.push(d1!);
      session.floor.push(f1!);
      const [d2, f2] = await timeInterleaved(oneShots, order, plan.block);
      oneShot.daemon.push(d2!);
      oneShot.floor.push(f2!);
      for (const side of round % 2 === 0 ? (['daemon', 'floor'] as const) : (['floor', 'daemon'] as const))
        concurrent[side].push(await timeConcurrent(pool[side], plan.block, last));
      if ((round + 1) % 5 === 0 || round + 1 === plan.rounds)
        progress(`round ${round + 1}/${plan.rounds} done`);
    }
    return [
      caseOf('1 session client, sequential', session),
      caseOf(`${plan.concurrency} session clients at once`, concurrent),
      caseOf('one-shot POSTs (no session), sequential', oneShot),
    ];
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    await Promise.allSettled([daemon?.stop(), floor?.stop()]);
  }
};
