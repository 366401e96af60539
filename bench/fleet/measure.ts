import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import type { FleetContext } from '../../machines/fleet-context.js';
import { CONTEXT_URI } from '../../src/mcp/context-resource.js';
import { ackReplan, notificationsOf } from '../edit-to-agent/measure.js';
import { type BenchDaemon, startDaemon } from '../lib/daemon.js';
import { connectSession, shouldInterrupt } from '../lib/session.js';
import { type Summary, summarize } from '../lib/stats.js';
import { type NatsServer, startNats } from './nats-server.js';

export interface FleetPlan {
  /** The fleet sizes measured, in daemons on this machine. */
  sizes: number[];
  /** Steers per size (each also times one receipt). */
  rounds: number;
}

/** One fleet size: a steer to every agent held, and an ack to its receipt on every member. */
export interface FleetSizeResult {
  members: number;
  /** Guidance written on member 1 → the last of the N agents' `notifications/resources/updated`, ms. */
  held: Summary;
  /** The same, each agent on its own: write → its push, ms. */
  eachHeld: Summary;
  /** One agent's ack returned → its receipt in `/status` of every member, ms. */
  receipt: Summary;
  lost: number;
}

export interface FleetResult {
  /** The same write → push on one daemon without `--fleet`, ms. */
  solo: Summary;
  fleets: FleetSizeResult[];
  natsVersion: string;
}

/** Past this a push or a receipt counts as lost. */
const LIMIT_MS = 15_000;
/** `/status` of a member is read this often while a receipt is awaited. */
const POLL_MS = 10;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-C', cwd, ...args], { stdio: 'ignore' });

interface Agent {
  daemon: BenchDaemon;
  client: Client;
  notifications: ReturnType<typeof notificationsOf>;
  guidance: string;
}

/** A daemon on its own HOME and clone of one repository (with `--fleet url`, or alone), and a subscribed session client. */
const startAgent = async (dir: string, fleet: string | null): Promise<Agent> => {
  const project = join(dir, 'widget');
  await mkdir(project, { recursive: true });
  git(project, 'init', '-q');
  git(project, 'remote', 'add', 'origin', 'git@github.com:acme/widget.git');
  const daemon = await startDaemon(project, {
    startArgs: ['--log-level', 'warn', ...(fleet === null ? [] : ['--fleet', fleet])],
    env: { HOME: dir, XDG_STATE_HOME: join(dir, 'state') },
  });
  const client = await connectSession(daemon.url);
  const notifications = notificationsOf(client);
  await client.subscribeResource({ uri: CONTEXT_URI });
  await shouldInterrupt(client, null);
  return { daemon, client, notifications, guidance: join(project, '.pulse', 'guidance.md') };
};

const stopAgent = async ({ client, daemon }: Agent) => {
  await client.close().catch(() => undefined);
  await daemon.stop();
};

const fleetOf = async (agent: Agent): Promise<FleetContext | null> => {
  const response = await fetch(new URL('/status', agent.daemon.url)).catch(() => null);
  if (!response?.ok) return null;
  return ((await response.json()) as { fleet?: FleetContext }).fleet ?? null;
};

const until = async (check: () => Promise<boolean>, limitMs: number): Promise<number | null> => {
  const deadline = performance.now() + limitMs;
  for (;;) {
    if (await check()) return performance.now();
    if (performance.now() > deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
};

/** Takes and acknowledges the replan an agent owes now (after its push). */
const ackOwn = async ({ client }: Agent) => {
  const answer = await shouldInterrupt(client, null);
  if (answer.pending_replan_event_id !== null) await ackReplan(client, answer.pending_replan_event_id);
};

/** Writes guidance on the first agent's project and times each agent's push; null for one that did not come. */
const steer = async (agents: Agent[], round: number): Promise<(number | null)[]> => {
  await Promise.all(agents.map((a) => a.notifications.quiet()));
  const arrivals = agents.map((a) => a.notifications.next(LIMIT_MS));
  await writeFile(agents[0]!.guidance, `# Guidance\n\nSteer ${round}: keep the change small.\n`);
  const written = performance.now();
  return (await Promise.all(arrivals)).map((at) => (at === null ? null : at - written));
};

/** The write → push of one daemon alone, as the fleet's baseline. */
const measureSolo = async (dir: string, rounds: number): Promise<Summary> => {
  const agent = await startAgent(join(dir, 'solo'), null);
  try {
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const [at] = await steer([agent], round);
      if (at != null) times.push(at);
      await ackOwn(agent);
    }
    return summarize(times);
  } finally {
    await stopAgent(agent);
  }
};

const measureSize = async (
  dir: string,
  nats: NatsServer,
  members: number,
  rounds: number,
  progress: (line: string) => void,
): Promise<FleetSizeResult> => {
  const agents: Agent[] = [];
  try {
    // Started a few at a time: twenty at once on a loaded machine time out their own start.
    for (let i = 0; i < members; i += 4)
      agents.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(4, members - i) }, (_, j) =>
            startAgent(join(dir, `n${members}-m${i + j}`), nats.url),
          ),
        )),
      );
    const joined = await until(async () => {
      const fleets = await Promise.all(agents.map(fleetOf));
      return fleets.every((f) => f?.members.length === members);
    }, 60_000);
    if (joined === null) throw new Error(`the ${members} members did not all see each other within 60 s`);
    progress(`${members} members joined`);
    const held: number[] = [];
    const eachHeld: number[] = [];
    const receipt: number[] = [];
    let lost = 0;
    for (let round = 0; round < rounds; round++) {
      const times = await steer(agents, round);
      for (const t of times) if (t !== null) eachHeld.push(t);
      if (times.some((t) => t === null)) lost++;
      else held.push(Math.max(...(times as number[])));
      // One agent, a different member each round, acks; its receipt is awaited on every member.
      const acker = agents[round % members]!;
      const steerId = (await fleetOf(agents[0]!))?.changes.at(-1)?.steerId;
      const machine = (await fleetOf(acker))?.machine;
      await ackOwn(acker);
      const acked = performance.now();
      const seen = await until(async () => {
        const fleets = await Promise.all(agents.map(fleetOf));
        return fleets.every((f) => f?.receipts.some((r) => r.steerId === steerId && r.machine === machine));
      }, LIMIT_MS);
      if (seen === null) lost++;
      else receipt.push(seen - acked);
      await Promise.all(agents.filter((a) => a !== acker).map(ackOwn));
      if ((round + 1) % 5 === 0) progress(`N=${members}: ${round + 1}/${rounds}`);
    }
    return {
      members,
      held: summarize(held),
      eachHeld: summarize(eachHeld),
      receipt: summarize(receipt),
      lost,
    };
  } finally {
    await Promise.all(agents.map(stopAgent));
  }
};

/**
 * Times the fleet on this machine: a guidance edit on one member → every agent on N members
 * held (its MCP client's `notifications/resources/updated`), beside one daemon alone, and one
 * agent's ack → its receipt in every member's `/status`. A real `nats-server -js`, real daemons.
 */
export const measureFleet = async (
  dir: string,
  plan: FleetPlan,
  progress: (line: string) => void,
): Promise<FleetResult> => {
  const natsVersion = execFileSync('nats-server', ['--version'], { encoding: 'utf8' }).trim();
  const solo = await measureSolo(dir, plan.rounds);
  progress(`solo: p50 ${solo.p50.toFixed(1)} ms`);
  const fleets: FleetSizeResult[] = [];
  for (const members of plan.sizes) {
    const nats = await startNats();
    try {
      fleets.push(await measureSize(dir, nats, members, plan.rounds, progress));
    } finally {
      await nats.close();
    }
  }
  return { solo, fleets, natsVersion };
};
