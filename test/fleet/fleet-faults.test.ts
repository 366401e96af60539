import { afterAll, describe, expect, it } from 'vitest';
import { readEvents, runCli, waitUntil } from '../support/daemon.js';
import { trackStarted } from '../support/started.js';
import {
  converged,
  fleetStateOf,
  guideOn,
  logged,
  type Member,
  ORIGINS,
  pulseLog,
  startMember,
  storedSteers,
  useFleetOfThree,
} from './members.js';
import { natsOrSkip, startNats } from './nats-server.js';

/*
 * The fault runs of issue 35 on three members and a real nats-server: each ends with the same
 * guidance bytes and the same last steer on every member, and the stream holding each steer once.
 */

const guidanceEvents = async (member: Member) =>
  (await readEvents(member.project)).filter((e) => e.path === '.pulse/guidance.md').length;

describe.runIf(natsOrSkip())('the fleet through faults', () => {
  const three = useFleetOfThree();

  it('keeps a steer made while nats-server was killed -9 and sends it once after the restart', async () => {
    const before = await storedSteers(three.nats.url);
    await three.nats.kill9();
    await Promise.all(three.members.map((member) => logged(member, /fleet: disconnected/)));
    const status = await runCli(['status', '-p', three.members[0]!.project], { env: three.members[0]!.env });
    expect(status.stdout).toMatch(
      /fleet: {5}disconnected since \d{4}-\d\d-\d\dT[\d:.]+Z, retrying: git:github\.com\/acme\/widget/,
    );
    const guide = await guideOn(three.members[0]!, 'Written while the fleet was down.');
    expect(guide.code, guide.stderr).toBe(0);
    // Steering goes on locally, and the change waits in the outbox on disk.
    expect(
      fleetStateOf(three.members[0]!).outbox.flatMap((out) => (out.kind === 'steer' ? [out.text] : [])),
    ).toEqual(['Written while the fleet was down.\n']);
    await three.nats.restart();
    const { text } = await converged(three.members, 40_000);
    expect(text).toBe('Written while the fleet was down.\n');
    expect(fleetStateOf(three.members[0]!).outbox).toEqual([]);
    expect(await storedSteers(three.nats.url)).toBe(before + 1);
  }, 60_000);

  it('brings a member stopped during two steers up to the latest once, logging that it caught up', async () => {
    const late = three.members[2]!;
    await late.daemon.stop();
    const events = await guidanceEvents(late);
    for (const text of ['First while it was away.', 'Second while it was away.'])
      expect((await guideOn(three.members[0]!, text)).code).toBe(0);
    await converged(three.members.slice(0, 2));
    await late.restart();
    const { text } = await converged(three.members);
    expect(text).toBe('Second while it was away.\n');
    await logged(late, /fleet: steer applied; caught up/);
    // One write, the latest: not each steer it missed.
    expect(await guidanceEvents(late)).toBe(events + 1);
  }, 60_000);

  it('sends a steer made while nats-server was frozen (SIGSTOP) 10 s, once, after it thaws', async () => {
    const before = await storedSteers(three.nats.url);
    three.nats.freeze();
    const guide = await guideOn(three.members[1]!, 'Written while the server was frozen.');
    expect(guide.code, guide.stderr).toBe(0);
    // The 10 s: past two missed pings (5 s apart), so the members see the server as gone.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    three.nats.thaw();
    const { text } = await converged(three.members, 40_000);
    expect(text).toBe('Written while the server was frozen.\n');
    await waitUntil(() => fleetStateOf(three.members[1]!).outbox.length === 0, { timeoutMs: 20_000 });
    expect(await storedSteers(three.nats.url)).toBe(before + 1);
  }, 90_000);

  it('never logs a steer applied twice on any member', () => {
    for (const member of three.members) {
      const applied = [
        ...pulseLog(member).matchAll(/"steerId":"(fst_[^"]+)","seq":(\d+)[^\n]*fleet: steer applied/g),
      ].map((match) => match[2]);
      expect(new Set(applied).size).toBe(applied.length);
    }
  });
});

describe.runIf(natsOrSkip())('fleet members that stop beating', () => {
  const started = trackStarted();
  afterAll(async () => {
    await started.cleanUp();
  });

  it('drops a member killed -9 from the others’ list once its entry is past its time', async () => {
    const nats = await startNats();
    try {
      // Beats every 200 ms, so an entry is past its time after 600 ms.
      const fast = { PULSE_FLEET_BEAT_MS: '200' };
      const [one, two] = await Promise.all(
        ORIGINS.slice(0, 2).map((origin) => startMember(started, nats.url, origin, fast)),
      );
      const membersOf = async (member: Member) =>
        (await runCli(['status', '-p', member.project], { env: member.env })).stdout.match(
          /(\d+) member\(s\)/,
        )?.[1];
      await waitUntil(async () => (await membersOf(one!)) === '2', { timeoutMs: 15_000 });
      await two!.daemon.kill9();
      await waitUntil(async () => (await membersOf(one!)) === '1', {
        timeoutMs: 15_000,
        describe: () => 'the killed member gone from the list',
      });
    } finally {
      await nats.close();
    }
  });
});
