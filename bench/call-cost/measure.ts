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
import { connectModern, connectSession, type SentRequest, shouldInterrupt } from '../lib/session.js';
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

/** The protocol eras: 2025-11-25 sessions (and one-shot POSTs), and 2026-07-28 per request. */
export const ERAS = ['2025-11-25', '2026-07-28'] as const;
export type Era = (typeof ERAS)[number];

type Side = Summary & { callsPerSecond: number };

/** One way of calling, measured on both servers; `daemon` is null where pulse does not serve the era. */
export interface CallCase {
  era: Era;
  name: string;
  daemon: Side | null;
  floor: Side;
  /** Daemon over floor, round by round: the median and the middle half. */
  p50Ratio: ReturnType<typeof spread> | null;
  throughputRatio: ReturnType<typeof spread> | null;
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

/** The modern client's own `tools/call` POST (envelope in `_meta`, its headers), sent again with `fetch` to `url`. */
const replayCall = async (url: string, sent: SentRequest): Promise<void> => {
  const response = await fetch(url, { method: 'POST', headers: sent.headers, body: sent.body });
  const text = await response.text();
  if (!response.ok || !text.includes('"structuredContent"') || text.includes('"isError":true'))
    throw new Error(`2026-07-28 one-shot call to ${url} failed: ${response.status} ${text.slice(0, 300)}`);
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

const sideOf = (blocks: Block[]): Side => {
  const samples = blocks.flatMap((b) => b.samples);
  const elapsed = blocks.reduce((sum, b) => sum + b.elapsedMs, 0);
  return { ...summarize(samples), callsPerSecond: (samples.length / elapsed) * 1000 };
};

const caseOf = (era: Era, name: string, { daemon, floor }: Rounds): CallCase => {
  const rate = (b: Block) => b.samples.length / b.elapsedMs;
  const served = daemon.length > 0;
  return {
    era,
    name,
    daemon: served ? sideOf(daemon) : null,
    floor: sideOf(floor),
    p50Ratio: served
      ? spread(daemon.map((b, i) => percentile(b.samples, 50) / percentile(floor[i]!.samples, 50)))
      : null,
    throughputRatio: served ? spread(daemon.map((b, i) => rate(b) / rate(floor[i]!))) : null,
  };
};

/** One era's servers: the floor always, the daemon when it serves the era. */
interface EraClients {
  era: Era;
  /** Session or modern clients: the first calls alone, all of them at once. */
  pool: { daemon: Client[] | null; floor: Client[] };
  oneShot: { daemon: (() => Promise<void>) | null; floor: () => Promise<void> };
}

/** The calls a round times, in the order they are interleaved: each served (era, side) once. */
const lanes = (eras: readonly EraClients[]) =>
  eras.flatMap((e) =>
    (['daemon', 'floor'] as const).flatMap((side) =>
      e.pool[side] === null ? [] : [{ era: e.era, side, clients: e.pool[side]!, oneShot: e.oneShot[side]! }],
    ),
  );

/** The modern client's last `tools/call` POST; the bench replays it as the one-shot call. */
const lastToolCall = (sent: readonly SentRequest[]): SentRequest => {
  const call = sent.findLast((request) => request.body.includes('"tools/call"'));
  if (call === undefined) throw new Error('The 2026-07-28 client sent no tools/call POST to record.');
  return call;
};

/**
 * Starts the real daemon on `project` and the floor beside it (answering the daemon's own
 * answer), then times `pulse_should_interrupt` on both, for both eras, round by round: one
 * client per server (calls alternating between all servers one by one), `concurrency` clients at
 * once (whole blocks in turn, the order rotating each round), and one-shot POSTs (alternating
 * like the first). The daemon's 2026-07-28 rows are measured when it answers `server/discover`.
 */
export const measureCallCost = async (
  project: string,
  plan: CallCostPlan,
  progress: (line: string) => void,
): Promise<CallCase[]> => {
  let daemon: BenchDaemon | null = null;
  let floor: ReadyChild | null = null;
  const clients: Client[] = [];
  const track = (client: Client) => {
    clients.push(client);
    return client;
  };
  try {
    daemon = await startDaemon(project, { startArgs: ['--log-level', 'warn'] });
    await waitUntilFilesSettled(project);
    const probe = track(await connectSession(daemon.url));
    const answer: InterruptAnswer = await shouldInterrupt(probe, null);
    const last = answer.latest_event_id;
    const answerPath = join(project, 'floor-answer.json');
    await writeFile(answerPath, JSON.stringify(await shouldInterrupt(probe, last)));
    floor = await startReadyChild('floor server', [FLOOR, answerPath], {
      ready: /FLOOR (\S+)/,
      limitMs: 30_000,
    });
    const floorUrl = { legacy: `${floor.announced}/mcp`, modern: `${floor.announced}/modern` };
    const daemonUrl = daemon.url;
    const many = (connect: () => Promise<Client>, length = plan.concurrency) =>
      Promise.all(Array.from({ length }, async () => track(await connect())));

    const floorSent: SentRequest[] = [];
    const floorModern = await many(() => connectModern(floorUrl.modern, floorSent));
    await shouldInterrupt(floorModern[0]!, last);
    const floorCall = lastToolCall(floorSent);
    const daemonSent: SentRequest[] = [];
    const daemonModern = await connectModern(daemonUrl, daemonSent).then(
      async (first) => {
        track(first);
        // Twice: the call recorded for the one-shot replay passes back the handle the first was given.
        await shouldInterrupt(first, last);
        await shouldInterrupt(first, last);
        return [first, ...(await many(() => connectModern(daemonUrl), plan.concurrency - 1))];
      },
      (error: unknown) => {
        progress(
          `the daemon does not serve 2026-07-28 (${error instanceof Error ? error.message : String(error)}): its rows say "not served"`,
        );
        return null;
      },
    );
    const daemonCall = daemonModern === null ? null : lastToolCall(daemonSent);
    const eras: EraClients[] = [
      {
        era: '2025-11-25',
        pool: {
          daemon: await many(() => connectSession(daemonUrl)),
          floor: await many(() => connectSession(floorUrl.legacy)),
        },
        oneShot: {
          daemon: () => oneShotCall(daemonUrl, last),
          floor: () => oneShotCall(floorUrl.legacy, last),
        },
      },
      {
        era: '2026-07-28',
        pool: { daemon: daemonModern, floor: floorModern },
        oneShot: {
          daemon: daemonCall === null ? null : () => replayCall(daemonUrl, daemonCall),
          floor: () => replayCall(floorUrl.modern, floorCall),
        },
      },
    ];
    const timed = lanes(eras);
    const sequential = timed.map((lane) => () => shouldInterrupt(lane.clients[0]!, last));
    const oneShots = timed.map((lane) => lane.oneShot);
    const forward = timed.map((_, i) => i);

    await timeInterleaved(sequential, forward, plan.warmup);
    await timeInterleaved(oneShots, forward, plan.warmup);
    for (const lane of timed)
      await timeConcurrent(lane.clients, Math.ceil(plan.warmup / plan.concurrency), last);

    const empty = () => timed.map((): Block[] => []);
    const rounds = { session: empty(), concurrent: empty(), oneShot: empty() };
    for (let round = 0; round < plan.rounds; round++) {
      // Rotated each round, so no server always goes first or right after another.
      const order = forward.map((_, k) => forward[(k + round) % forward.length]!);
      const seq = await timeInterleaved(sequential, order, plan.block);
      const one = await timeInterleaved(oneShots, order, plan.block);
      for (const i of forward) {
        rounds.session[i]!.push(seq[i]!);
        rounds.oneShot[i]!.push(one[i]!);
      }
      for (const i of order)
        rounds.concurrent[i]!.push(await timeConcurrent(timed[i]!.clients, plan.block, last));
      if ((round + 1) % 5 === 0 || round + 1 === plan.rounds)
        progress(`round ${round + 1}/${plan.rounds} done`);
    }
    const pick = (blocks: Block[][], era: Era): Rounds => {
      const of = (side: 'daemon' | 'floor') => {
        const i = timed.findIndex((lane) => lane.era === era && lane.side === side);
        return i < 0 ? [] : blocks[i]!;
      };
      return { daemon: of('daemon'), floor: of('floor') };
    };
    return ERAS.flatMap((era) => [
      caseOf(era, '1 client, sequential', pick(rounds.session, era)),
      caseOf(era, `${plan.concurrency} clients at once`, pick(rounds.concurrent, era)),
      caseOf(era, 'one-shot POSTs, sequential', pick(rounds.oneShot, era)),
    ]);
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    await Promise.allSettled([daemon?.stop(), floor?.stop()]);
  }
};
