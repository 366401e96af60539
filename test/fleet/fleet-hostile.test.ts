import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetContext } from '../../machines/fleet-context.js';
import { fleetSteer, projectSubjects } from '../../src/fleet/fleet-messages.js';
import { readEvents, startDaemon, tempProject } from '../support/daemon.js';
import { trackStarted } from '../support/started.js';
import {
  agentOn,
  converged,
  guidanceOf,
  guideOn,
  KEY,
  logged,
  ORIGINS,
  pulseLog,
  startMember,
} from './members.js';
import { type NatsServer, natsOrSkip, startNats } from './nats-server.js';

/* What arrives from the fleet is data: it never runs, never reaches sources.json, never leaves its project; credentials never show. */

const PASSWORD = 'fleet-pa55word-9f3';
const machine = { id: 'badbadbad000', name: 'intruder' };

describe.runIf(natsOrSkip())('a fleet member under hostile input', () => {
  const started = trackStarted();
  let nats: NatsServer | null = null;
  afterEach(async () => {
    await started.cleanUp();
    await nats?.close();
    nats = null;
  });

  it('never writes the fleet password to its log or terminal, with the right one or a wrong one', async () => {
    nats = await startNats(['--user', 'alice', '--pass', PASSWORD]);
    const right = await startMember(started, nats.url, ORIGINS[0]!, {
      PULSE_FLEET_USER: 'alice',
      PULSE_FLEET_PASSWORD: PASSWORD,
    });
    await logged(right, /fleet: following steers/);
    const wrong = await startMember(started, `nats://alice:${PASSWORD}x@127.0.0.1:${nats.port}`, ORIGINS[1]!);
    await logged(wrong, /fleet: could not join|Authorization/i);
    const { runCli } = await import('../support/daemon.js');
    for (const member of [right, wrong]) {
      const status = await runCli(['status', '-p', member.project, '--json', '--fleet'], { env: member.env });
      expect(status.stdout).toContain('"fleet"');
      expect(status.stdout).not.toContain(PASSWORD);
      expect(pulseLog(member)).toContain('fleet');
      expect(pulseLog(member)).not.toContain(PASSWORD);
      expect(member.daemon.output()).not.toContain(PASSWORD);
    }
  });

  it('ignores other projects’ subjects and refuses a steer for sources.json or a malformed one, writing only its own files', async () => {
    nats = await startNats();
    const member = await startMember(started, nats.url, ORIGINS[0]!);
    await logged(member, /fleet: following steers/);
    const sources = join(member.project, '.pulse', 'sources.json');
    const { existsSync } = await import('node:fs');
    const nc = await connect({ servers: nats.url });
    const js = jetstream(nc);
    const ours = projectSubjects(KEY);
    const theirs = projectSubjects('git:github.com/other/project');
    const steer = (text: string, id: string) =>
      JSON.stringify(fleetSteer(machine, 'guidance', text, id, 'now'));
    await js.publish(theirs.steer('guidance'), steer('Another project’s steer.', 'fst_x_1'));
    await js.publish(
      `${ours.steers.slice(0, -1)}sources`,
      JSON.stringify({ ...JSON.parse(steer('{"sources":{}}', 'fst_x_2')), file: 'sources' }),
    );
    await js.publish(ours.steer('guidance'), '{"v":1,"kind":"steer","file":"guidance","text":"no hash"}');
    await logged(member, /fleet: a steer was refused: its hash does not match/);
    await js.publish(
      ours.steer('guidance'),
      steer('Touch nothing: $(touch /tmp/pulse-fleet-pwned) `id`', 'fst_x_3'),
    );
    await nc.close();
    await converged([member]);
    // Applying it published nothing back: the stream holds the intruder's steer last.
    expect(pulseLog(member)).not.toMatch(/fleet: steer published/);
    expect(guidanceOf(member)).toBe('Touch nothing: $(touch /tmp/pulse-fleet-pwned) `id`\n');
    expect(existsSync(sources)).toBe(false);
    expect(pulseLog(member)).toMatch(/fleet: a steer was refused: not guidance or constraints/);
    expect(pulseLog(member)).toMatch(/fleet: a steer was refused: its hash does not match/);
    // One guidance change logged: the other project's steer never reached this one.
    expect(
      (await readEvents(member.project)).filter(
        (e) => e.path === '.pulse/guidance.md' && e.kind === 'modified',
      ),
    ).toHaveLength(1);
    expect(() => readFileSync('/tmp/pulse-fleet-pwned')).toThrow();
  });

  it('refuses malformed, oversized and forged receipts, ignores other projects’ ones, cleans a peer’s words, and frees no agent', async () => {
    nats = await startNats();
    const member = await startMember(started, nats.url, ORIGINS[0]!);
    await logged(member, /fleet: following steers/);
    const agent = await agentOn(started, member);
    expect((await guideOn(member, 'Hold everyone.')).code).toBe(0);
    const { runCli, waitUntil, callTool } = await import('../support/daemon.js');
    const status = async () =>
      JSON.parse((await runCli(['status', '-p', member.project, '--json'], { env: member.env })).stdout) as {
        fleet: FleetContext;
        owing: { id: string; label: string }[];
      };
    const { steerId } = await waitUntil(
      async () => (await status()).fleet.changes.find((c) => c.seq !== null),
      {
        timeoutMs: 15_000,
      },
    );
    const local = (await status()).owing[0]!;
    const receipt = (over: Record<string, unknown> = {}) =>
      JSON.stringify({
        v: 1,
        kind: 'receipt',
        receiptId: `frc_${Math.random().toString(36).slice(2)}`,
        steerId,
        machine,
        agent: local.id,
        label: `${local.label}\u001b]0;pwned\u0007\u001b[2J`,
        at: new Date().toISOString(),
        plan_changed: true,
        added: 1,
        removed: 0,
        summary: 'replanned',
        diff: '+ step\u001b]52;c;cm0gLXJmIH4=\u0007',
        ...over,
      });
    const nc = await connect({ servers: nats.url });
    const js = jetstream(nc);
    const ours = projectSubjects(KEY);
    await js.publish(projectSubjects('git:github.com/other/project').ack(machine.id), receipt());
    await js.publish(ours.ack(machine.id), 'not json');
    await js.publish(ours.ack(machine.id), receipt({ diff: 'x'.repeat(40_000) }));
    await js.publish(ours.ack('cafecafe0000'), receipt());
    await js.publish(ours.ack(machine.id), receipt({ added: -1 }));
    await js.publish(ours.ack(machine.id), receipt());
    await nc.close();
    await logged(member, /fleet: receipt heard/);
    for (const why of [
      'not JSON',
      'too large',
      'its machine is not the one its subject names',
      'its plan change is malformed',
    ])
      expect(pulseLog(member)).toContain(`fleet: a receipt was refused: ${why}`);
    const { receipts } = (await status()).fleet;
    // Only the well-formed one, from this project, its words cleaned of terminal escapes.
    expect(receipts).toHaveLength(1);
    expect(receipts[0]!.label).toBe(local.label);
    expect(receipts[0]!.diff).toBe('+ step');
    // A receipt naming the local agent is data: only its own ack frees it.
    expect((await callTool<{ needs_replan: boolean }>(agent, 'pulse_should_interrupt')).needs_replan).toBe(
      true,
    );
  });

  it('keeps a clone whose .pulse/fleet-project names a project the user did not allow out of the fleet', async () => {
    nats = await startNats();
    const honest = await startMember(started, nats.url, ORIGINS[0]!);
    await logged(honest, /fleet: following steers/);
    // The hostile clone names the honest team's fleet project by name; it is refused, loudly.
    const home = await tempProject('pulse-fleet-hostile-');
    started.projects.push(home);
    const env = { HOME: home, XDG_STATE_HOME: join(home, 'state') };
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(home, '.pulse'));
    writeFileSync(join(home, '.pulse', 'fleet-project'), 'widget\n');
    const daemon = await startDaemon(home, { args: ['--fleet', nats.url], env });
    started.daemons.push(daemon);
    const log = () => readFileSync(join(home, '.pulse', 'pulse.log'), 'utf8');
    const { waitUntil } = await import('../support/daemon.js');
    await waitUntil(() => /stays out of the fleet.*--fleet-project widget/.test(log()), {
      timeoutMs: 10_000,
      describe: log,
    });
    expect(log()).not.toMatch(/fleet: following steers/);
  });

  it('does nothing fleet-related without --fleet', async () => {
    const project = await tempProject('pulse-solo-');
    started.projects.push(project);
    const daemon = await startDaemon(project);
    started.daemons.push(daemon);
    expect(daemon.output()).not.toMatch(/fleet/i);
    expect(readFileSync(join(project, '.pulse', 'pulse.log'), 'utf8')).not.toMatch(/fleet/i);
  });
});
