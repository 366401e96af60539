import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, readEvents } from '../support/daemon.js';
import {
  agentOn,
  converged,
  fleetStateOf,
  guideOn,
  logged,
  pulseLog,
  storedSteers,
  useFleetOfThree,
} from './members.js';
import { natsOrSkip } from './nats-server.js';

/*
 * Three machines (three daemons, each with its own HOME and its own clone of one repository, the
 * remote spelt three ways) on a real nats-server with JetStream, and real MCP session clients as agents.
 */

interface Decision {
  needs_replan: boolean;
  pending_replan_event_id: string | null;
}

describe.runIf(natsOrSkip())('the fleet', () => {
  const three = useFleetOfThree();
  const { started } = three;

  it('holds every agent on every member for a steer on one, each freed only by its own ack, with no echo', async () => {
    const agents = await Promise.all(three.members.map((member) => agentOn(started, member)));
    const guide = await guideOn(three.members[0]!, 'Use the new parser everywhere.');
    expect(guide.code, guide.stderr).toBe(0);
    const { text, steerId } = await converged(three.members);
    expect(text).toBe('Use the new parser everywhere.\n');
    expect(steerId).toMatch(/^fst_/);
    const decisions = await Promise.all(
      agents.map((agent) => callTool<Decision>(agent, 'pulse_should_interrupt')),
    );
    for (const decision of decisions) expect(decision.needs_replan).toBe(true);
    // Each member's own event, each agent freed by its own ack only.
    await callTool(agents[1]!, 'pulse_ack_replan', { event_id: decisions[1]!.pending_replan_event_id });
    expect((await callTool<Decision>(agents[1]!, 'pulse_should_interrupt')).needs_replan).toBe(false);
    expect((await callTool<Decision>(agents[0]!, 'pulse_should_interrupt')).needs_replan).toBe(true);
    expect((await callTool<Decision>(agents[2]!, 'pulse_should_interrupt')).needs_replan).toBe(true);
    // Applying a steer from the fleet publishes nothing back: the stream holds the one steer.
    expect(await storedSteers(three.nats.url)).toBe(1);
    // Each member logged the write with the machine it came from.
    const origin = fleetStateOf(three.members[0]!).applied.guidance!.machine;
    for (const member of three.members.slice(1))
      expect(readFileSync(join(member.project, '.pulse', 'pulse.log'), 'utf8')).toContain(
        `the fleet (from ${origin})`,
      );
  });

  it('shows the fleet project key and its members in pulse status, and each member with --fleet', async () => {
    const { runCli, waitUntil } = await import('../support/daemon.js');
    const status = () =>
      runCli(['status', '-p', three.members[0]!.project, '--fleet'], { env: three.members[0]!.env });
    const shown = await waitUntil(
      async () => {
        const { stdout } = await status();
        return /3 member\(s\)/.test(stdout) && stdout;
      },
      { timeoutMs: 15_000, describe: () => 'three members in pulse status' },
    );
    expect(shown).toMatch(
      /fleet: {5}connected: git:github\.com\/acme\/widget on nats:\/\/127\.0\.0\.1:\d+ \(no auth\) as \S+ \([0-9a-f]{12}\); 3 member\(s\)/,
    );
    expect(shown.match(/^member: {4}\S+ \([0-9a-f]{12}\), seen /gm)).toHaveLength(3);
  });

  it('converges two members steering at once on the same bytes and the same last steer, the stream’s last', async () => {
    const before = await storedSteers(three.nats.url);
    const [one, two] = await Promise.all([
      guideOn(three.members[0]!, 'Member one says: stop after the parser.'),
      guideOn(three.members[1]!, 'Member two says: write the tests first.'),
    ]);
    expect([one.code, two.code]).toEqual([0, 0]);
    await waitForStored(before + 2);
    const { text } = await converged(three.members);
    expect([
      'Member one says: stop after the parser.\n',
      'Member two says: write the tests first.\n',
    ]).toContain(text);
    expect(await storedSteers(three.nats.url)).toBe(before + 2);
  });

  const waitForStored = async (count: number) => {
    const { waitUntil } = await import('../support/daemon.js');
    await waitUntil(async () => (await storedSteers(three.nats.url)) >= count, { timeoutMs: 15_000 });
  };

  it('applies a redelivered steer once: a member restarted is handed the last steer again and logs no new event', async () => {
    const third = three.members[2]!;
    const { steerId } = await converged(three.members);
    const events = (await readEvents(third.project)).length;
    await third.daemon.stop();
    await third.restart();
    await logged(third, /fleet: steer already applied/);
    expect(fleetStateOf(third).applied.guidance!.steerId).toBe(steerId);
    expect((await readEvents(third.project)).length).toBe(events);
  });

  it('publishes a hand edit of guidance.md made while a member was down once it starts again', async () => {
    const second = three.members[1]!;
    await second.daemon.stop();
    writeFileSync(join(second.project, '.pulse', 'guidance.md'), 'Edited by hand while pulse was down.\n');
    await second.restart();
    const { text } = await converged(three.members);
    expect(text).toBe('Edited by hand while pulse was down.\n');
    expect(pulseLog(second)).toMatch(/fleet: steer published/);
  });
});
