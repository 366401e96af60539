import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { prng } from '../../sim/prng.js';
import {
  callTool,
  connectClient,
  type LoggedEvent,
  type RunningDaemon,
  readEvents,
  removeProject,
  startDaemon,
  tempProject,
} from '../helpers/daemon.js';
import type { AckAnswer, Decision } from '../helpers/protocol.js';
import { stormSeed } from '../helpers/random.js';

const maxId = (ids: Iterable<string>): string | null => {
  let max: string | null = null;
  for (const id of ids) if (max === null || id > max) max = id;
  return max;
};

const running: RunningDaemon[] = [];
const projects: string[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.kill9()));
  await Promise.all(projects.splice(0).map(removeProject));
});

const track = async (project: string) => {
  const daemon = await startDaemon(project);
  running.push(daemon);
  return daemon;
};

describe('crash safety', () => {
  it('survives kill -9 at random moments of an edit and ack storm: no lost ack, no lost pending replan, no broken file', async () => {
    const seed = stormSeed('PULSE_CRASH_SEED', 'crash storm');
    // Kill moments come from their own stream, so they replay exactly whatever the call timing.
    const killRandom = prng(seed);
    const editRandom = prng(seed ^ 0x9e3779b9);
    const KILLS = 12;
    const project = await tempProject('pulse-crash-');
    projects.push(project);
    const pulse = join(project, '.pulse');

    // Everything the daemons answered, across all lives.
    const acceptedAcks: string[] = [];
    const sentAcks = new Set<string>();
    const answeredIds = new Set<string>();
    let lastPendingSeen: string | null = null;
    let kills = 0;
    let writes = 0;
    const stats = { calls: 0, acceptedAcks: 0, rejectedAcks: 0 };

    const checkAfterRestart = async (daemon: RunningDaemon, life: number) => {
      const where = `seed ${seed}, after kill ${life}`;
      const problems: string[] = [];
      const stateText = await readFile(join(pulse, 'state.json'), 'utf8');
      let state: Record<string, unknown> = {};
      try {
        state = JSON.parse(stateText);
      } catch (error) {
        problems.push(`state.json does not parse: ${error}`);
      }
      let events: LoggedEvent[] = [];
      try {
        events = await readEvents(project);
      } catch (error) {
        problems.push(`events.jsonl has a line that does not parse: ${error}`);
      }
      const ids = events.map((e) => e.id);
      if (new Set(ids).size !== ids.length) problems.push('events.jsonl holds a duplicate event id');
      if (ids.some((id, i) => i > 0 && id <= ids[i - 1]!))
        problems.push('event ids are not in creation order');
      const logged = new Set(ids);
      const missing = [...answeredIds].filter((id) => !logged.has(id));
      if (missing.length > 0) problems.push(`answered event ids missing from the log: ${missing.join(', ')}`);

      const client = await connectClient(daemon.url);
      const answer = await callTool<Decision>(client, 'pulse_should_interrupt');
      await client.close();
      const ack = answer.last_acknowledged_event_id;
      const lastAccepted = maxId(acceptedAcks);
      if (lastAccepted !== null && (ack === null || ack < lastAccepted)) {
        problems.push(`ack lost: ${lastAccepted} was accepted, the daemon now says ${ack}`);
      }
      if (ack !== null && !sentAcks.has(ack)) problems.push(`acknowledged ${ack}, an id no one acked`);
      if (state.last_acknowledged_event_id !== ack) {
        problems.push(`state.json says ${state.last_acknowledged_event_id}, the daemon says ${ack}`);
      }
      if (lastPendingSeen !== null && (ack === null || ack < lastPendingSeen) && !answer.needs_replan) {
        problems.push(`pending replan ${lastPendingSeen} was lost (ack is ${ack})`);
      }
      expect(problems, where).toEqual([]);
    };

    const storm = async (daemon: RunningDaemon, life: number) => {
      const client: Client = await connectClient(daemon.url);
      let alive = true;
      const observe = (answer: Decision) => {
        stats.calls++;
        if (answer.latest_event_id) answeredIds.add(answer.latest_event_id);
        const pending = answer.needs_replan ? answer.pending_replan_event_id : null;
        if (pending === null) return null;
        answeredIds.add(pending);
        if (lastPendingSeen === null || pending > lastPendingSeen) lastPendingSeen = pending;
        return pending;
      };
      // The user edits in bursts of 1 to 3 saves, each burst followed by a call, so acks can win.
      const editor = async () => {
        while (alive) {
          for (let burst = Math.floor(editRandom() * 3); burst >= 0 && alive; burst--) await edit();
          observe(await callTool<Decision>(client, 'pulse_should_interrupt'));
        }
      };
      const edit = async () => {
        const roll = editRandom();
        const name = roll < 0.45 ? 'guidance.md' : roll < 0.75 ? 'constraints.md' : 'plan.md';
        const content = `${name} life ${life} write ${writes++} ${editRandom().toString(36)}\n`;
        if (editRandom() < 0.5) {
          await writeFile(join(pulse, name), content);
        } else {
          const temp = join(pulse, `.${name}.${writes}.tmp`);
          await writeFile(temp, content);
          await rename(temp, join(pulse, name));
        }
      };
      const agent = async () => {
        while (alive) {
          const pending = observe(await callTool<Decision>(client, 'pulse_should_interrupt'));
          if (pending === null) continue;
          await writeFile(join(pulse, 'plan.md'), `plan for ${pending}\n`);
          sentAcks.add(pending);
          const reply = await callTool<AckAnswer>(client, 'pulse_ack_replan', { event_id: pending });
          if (reply.accepted) {
            acceptedAcks.push(pending);
            stats.acceptedAcks++;
          } else {
            stats.rejectedAcks++;
          }
        }
      };
      // Calls cut off by the kill reject; only answers that arrived count.
      const observer = async () => {
        while (alive) observe(await callTool<Decision>(client, 'pulse_should_interrupt'));
      };
      const loops = [editor(), agent(), observer()].map((loop) => loop.catch(() => {}));
      const delay = Math.floor(killRandom() * 800);
      await new Promise((resolve) => setTimeout(resolve, delay));
      await daemon.kill9();
      kills++;
      alive = false;
      // Closing the client rejects the calls the kill cut off (the SDK would retry them for a minute).
      await client.close().catch(() => {});
      await Promise.all(loops);
    };

    let daemon = await track(project);
    for (let life = 1; life <= KILLS; life++) {
      await storm(daemon, life);
      daemon = await track(project);
      await checkAfterRestart(daemon, life);
    }
    expect(kills).toBe(KILLS);
    expect(stats.acceptedAcks, `seed ${seed}: the storm accepted no ack at all`).toBeGreaterThan(0);
    console.log(
      `crash storm seed ${seed}: ${kills} kills survived, ${writes} writes, ${stats.calls} interrupt calls, ` +
        `${stats.acceptedAcks} acks accepted, ${stats.rejectedAcks} rejected, ${(await readEvents(project)).length} events, nothing lost`,
    );
    expect(await daemon.stop()).toBe(0);
  }, 60_000);

  it('repairs a torn last line in events.jsonl on start, warns about it, and keeps logging', async () => {
    const project = await tempProject('pulse-torn-');
    projects.push(project);
    const pulse = join(project, '.pulse');
    let daemon = await track(project);
    await writeFile(join(pulse, 'guidance.md'), 'first guidance\n');
    let client = await connectClient(daemon.url);
    const before = await callTool<Decision>(client, 'pulse_should_interrupt');
    await client.close();
    expect(await daemon.stop()).toBe(0);
    const intact = await readFile(join(pulse, 'events.jsonl'), 'utf8');
    expect(intact.split('\n').filter(Boolean)).toHaveLength(1);
    await appendFile(
      join(pulse, 'events.jsonl'),
      '{"id":"evt_20261129T101500123456Z_1a2b3c4d","timestamp":"2026-11-',
    );

    daemon = await track(project);
    expect(daemon.output()).toMatch(/warning: .*events\.jsonl.*torn line/);
    expect(await readFile(join(pulse, 'events.jsonl'), 'utf8')).toBe(intact);

    await writeFile(join(pulse, 'guidance.md'), 'second guidance\n');
    client = await connectClient(daemon.url);
    const after = await callTool<Decision>(client, 'pulse_should_interrupt');
    await client.close();
    expect(after.needs_replan).toBe(true);
    expect(after.pending_replan_event_id).not.toBe(before.pending_replan_event_id);
    const events = await readEvents(project);
    expect(events.map((e) => e.id)).toEqual([before.pending_replan_event_id, after.pending_replan_event_id]);
  });
});
