import { describe, expect, it } from 'vitest';
import type { FleetContext } from '../../machines/fleet-context.js';
import { callTool, connectClient, runCli, waitUntil } from '../support/daemon.js';
import { converged, fleetStateOf, KEY, logged, type Member, useFleetOfThree } from './members.js';
import { natsOrSkip } from './nats-server.js';

/*
 * Receipts across members: three daemons (own HOME, own clone) on a real nats-server, real MCP
 * session clients as agents; `pulse guide --wait` on member 1 waits for all of them.
 */

interface Decision {
  needs_replan: boolean;
  pending_replan_event_id: string | null;
}

const fleetOf = async (member: Member): Promise<FleetContext & { state: string }> => {
  const { stdout } = await runCli(['status', '-p', member.project, '--json'], { env: member.env });
  return (JSON.parse(stdout) as { fleet: FleetContext & { state: string } }).fleet;
};

const ackOwn = async (agent: Awaited<ReturnType<typeof connectClient>>) => {
  const decision = await callTool<Decision>(agent, 'pulse_should_interrupt');
  expect(decision.needs_replan).toBe(true);
  await callTool(agent, 'pulse_ack_replan', { event_id: decision.pending_replan_event_id });
};

describe.runIf(natsOrSkip())('receipts across the fleet', () => {
  const three = useFleetOfThree();
  const { started } = three;

  it('waits on member 1 for every agent on all three members, naming machine and agent, and exits 0 only once all acked', async () => {
    const agents = await Promise.all(
      three.members.map(async (member, i) => {
        const client = await connectClient(member.daemon.url, { name: 'claude-code', version: `2.1.${i}` });
        started.clients.push(client);
        await callTool(client, 'pulse_should_interrupt');
        return client;
      }),
    );
    // Every member has said it holds an agent, so member 1 knows whom to wait for.
    await waitUntil(
      async () =>
        (await fleetOf(three.members[0]!)).members.filter((m) => m.agents.length === 1).length === 3,
      { timeoutMs: 15_000, describe: () => 'three members with an agent each' },
    );
    let ended = false;
    const waiting = runCli(
      [
        'guide',
        'Receipts from every machine.',
        '-p',
        three.members[0]!.project,
        '--wait',
        '--timeout',
        '60s',
      ],
      {
        env: three.members[0]!.env,
        timeoutMs: 90_000,
      },
    ).finally(() => {
      ended = true;
    });
    await converged(three.members);
    const machines = await Promise.all(three.members.map(async (m) => (await fleetOf(m)).machine));
    // Every agent is held on its own member, and a receipt from another never frees it.
    await ackOwn(agents[0]!);
    await ackOwn(agents[1]!);
    await waitUntil(async () => (await fleetOf(three.members[0]!)).receipts.length >= 2, {
      timeoutMs: 15_000,
    });
    expect((await callTool<Decision>(agents[2]!, 'pulse_should_interrupt')).needs_replan).toBe(true);
    // Member 1's own agent and member 2's have acknowledged: member 3's still owes, so --wait waits.
    expect(ended).toBe(false);
    await ackOwn(agents[2]!);
    const { code, stdout, stderr } = await waiting;
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    for (const i of [1, 2]) expect(stdout).toContain(`${machines[i]}: Claude Code 2.1.${i} (session `);
    expect(stdout).toMatch(/Claude Code 2\.1\.0 \(session [^)]+\) acknowledged/);
    expect(stdout).toContain('Every agent on every member has acknowledged');
    // Each member keeps both remote receipts and its own, tied to the one fleet change.
    for (const member of three.members) {
      const fleet = await waitUntil(
        async () => {
          const f = await fleetOf(member);
          return f.receipts.length >= 3 && f;
        },
        { timeoutMs: 15_000 },
      );
      expect(new Set(fleet.receipts.map((r) => r.steerId)).size).toBe(1);
      expect(fleet.receipts.map((r) => r.machine).sort()).toEqual([...machines].sort());
    }
    // The page lists the members with their agents, and the history shows the other members' receipts under the change.
    const page = await (await fetch(new URL('/', three.members[0]!.daemon.url))).text();
    const history = page.slice(page.indexOf('id="history-list"'), page.indexOf('id="fleet"'));
    for (const i of [1, 2]) expect(history).toContain(`${machines[i]}: Claude Code 2.1.${i} (session `);
    const fleetCard = page.slice(
      page.indexOf('id="fleet"'),
      page.indexOf('</section>', page.indexOf('id="fleet"')),
    );
    for (const machine of machines) expect(fleetCard).toContain(machine);
    expect(fleetCard.match(/acknowledged all/g)).toHaveLength(3);
    const status = await runCli(['status', '-p', three.members[0]!.project, '--fleet'], {
      env: three.members[0]!.env,
    });
    expect(
      status.stdout.match(/^ {2}agent: {3}Claude Code 2\.1\.\d \(session [^)]+\), acknowledged all$/gm),
    ).toHaveLength(3);
  });

  it('sends a receipt made while NATS is down once it is back, exactly once', async () => {
    const agent = await connectClient(three.members[1]!.daemon.url, { name: 'codex', version: '9.9.9' });
    started.clients.push(agent);
    await callTool(agent, 'pulse_should_interrupt');
    const guide = await runCli(['guide', 'A steer before the outage.', '-p', three.members[0]!.project], {
      env: three.members[0]!.env,
    });
    expect(guide.code, guide.stderr).toBe(0);
    await converged(three.members);
    await three.nats.kill9();
    await logged(three.members[1]!, /fleet: disconnected/);
    const before = (await fleetOf(three.members[0]!)).receipts.length;
    await ackOwn(agent);
    await waitUntil(() => fleetStateOf(three.members[1]!).outbox.some((o) => o.kind === 'receipt'), {
      timeoutMs: 10_000,
    });
    await three.nats.restart();
    const fleet = await waitUntil(
      async () => {
        const f = await fleetOf(three.members[0]!);
        return f.receipts.length > before && f;
      },
      { timeoutMs: 40_000, describe: () => 'the kept receipt on member 1' },
    );
    expect(fleetStateOf(three.members[1]!).outbox).toEqual([]);
    const codex = fleet.receipts.filter((r) => r.label.startsWith('Codex'));
    expect(codex).toHaveLength(1);
    // The stream stored it once.
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const { projectSubjects, FLEET_STREAM } = await import('../../src/fleet/fleet-messages.js');
    const nc = await connect({ servers: three.nats.url });
    const info = await (await jetstreamManager(nc)).streams.info(FLEET_STREAM, {
      subjects_filter: projectSubjects(KEY).acks,
    });
    await nc.close();
    const machineId = /\(([0-9a-f]{12})\)$/.exec(codex[0]!.machine)![1]!;
    // Member 2's subject holds its receipt of the first test and this one, each once.
    expect(info.state.subjects?.[projectSubjects(KEY).ack(machineId)]).toBe(2);
  });

  it('names who still owes on every member when --wait times out, and exits 3', async () => {
    const machines = await Promise.all(three.members.map(async (m) => (await fleetOf(m)).machine));
    const { code, stdout } = await runCli(
      ['guide', 'Nobody will answer this one.', '-p', three.members[0]!.project, '--wait', '--timeout', '5s'],
      { env: three.members[0]!.env, timeoutMs: 60_000 },
    );
    expect(code, stdout).toBe(3);
    const owing = stdout.slice(stdout.indexOf('Timed out after'));
    expect(owing).toMatch(/still owing evt_\S+: /);
    for (const i of [1, 2]) expect(owing).toContain(`${machines[i]}: Claude Code 2.1.${i} (session `);
    expect(owing).toContain(`${machines[1]}: Codex 9.9.9 (session `);
  });
});
