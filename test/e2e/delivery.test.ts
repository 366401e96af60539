import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  callTool,
  connectClient,
  type RunningDaemon,
  removeProject,
  startDaemon,
  tempProject,
  waitUntil,
} from '../helpers/daemon.js';
import { readJsonLines, save } from '../helpers/files.js';
import { fixtureCommand, fixtureFiles } from '../helpers/source-fixture.js';

/*
 * Delivery, end to end: a real `pulse start` polls the fixture MCP server, the reflection gate
 * hands the events to an agent through `pulse_should_interrupt`, and the agent acknowledges them
 * with `pulse_ack_events`. The lease is shortened with PULSE_LEASE_MS where a test waits it out.
 */

interface ExternalEvent {
  id: string;
  source: string;
  item_id: string;
  title: string;
  urgency: number;
  received_at: string;
  detail?: string;
}

interface Answer {
  needs_replan: boolean;
  pending_replan_event_id: string | null;
  needs_attention: boolean;
  external_events: ExternalEvent[];
  delivery_id: string | null;
  lease_expires_at: string | null;
}

interface AckAnswer {
  accepted: boolean;
  delivery_id: string;
  reason: string;
  code?: string;
  consumed: string[];
  put_back: string[];
}

interface InboxRow {
  op: 'insert' | 'remove';
  event?: { id: string };
  ids?: string[];
}

const projects: string[] = [];
const daemons: RunningDaemon[] = [];
const clients: Client[] = [];

afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await Promise.all(daemons.splice(0).map((daemon) => daemon.stop().then(() => daemon.kill9())));
  await Promise.all(projects.splice(0).map(removeProject));
});

const items = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: `cal-${i + 1}`, title: `cal item ${i + 1}` }));

/** A project whose one source lists `count` items; a five-minute interval, so only catch-up polls again. */
const projectWith = async (count: number) => {
  const project = await tempProject('pulse-delivery-');
  projects.push(project);
  const cal = await fixtureFiles(project, 'cal', { items: items(count) });
  await mkdir(join(project, '.pulse'), { recursive: true });
  const config = {
    mcpServers: { cal: fixtureCommand(cal.args) },
    sources: [{ name: 'cal', server: 'cal', tool: 'list_events', args: {}, interval_sec: 300 }],
  };
  return {
    project,
    writeSources: () => save(join(project, '.pulse', 'sources.json'), JSON.stringify(config)),
  };
};

const start = async (project: string, env: Record<string, string> = {}) => {
  const daemon = await startDaemon(project, { env });
  daemons.push(daemon);
  const client = await connectClient(daemon.url);
  clients.push(client);
  return {
    daemon,
    check: () => callTool<Answer>(client, 'pulse_should_interrupt', {}),
    ack: (deliveryId: string, outcomes?: Record<string, string>) =>
      callTool<AckAnswer>(client, 'pulse_ack_events', {
        delivery_id: deliveryId,
        ...(outcomes ? { outcomes } : {}),
      }),
  };
};

type Agent = Awaited<ReturnType<typeof start>>;

const live = async (project: string) => {
  const rows = await readJsonLines<InboxRow>(join(project, '.pulse', 'inbox.jsonl'));
  const ids = new Set<string>();
  for (const row of rows) {
    if (row.op === 'insert') ids.add(row.event!.id);
    else for (const id of row.ids ?? []) ids.delete(id);
  }
  return { ids, inserts: rows.filter((row) => row.op === 'insert').length };
};

/** Checks in until a delivery is out, and returns that answer. */
const nextDelivery = (agent: Agent, timeoutMs = 15_000, not?: string) =>
  waitUntil(
    async () => {
      const answer = await agent.check();
      return answer.needs_attention && answer.delivery_id !== not && answer;
    },
    { timeoutMs, intervalMs: 100, describe: () => 'a delivery' },
  );

/** An agent that checks in and acknowledges everything as told, until `count` item ids came. */
const receiveAll = async (agent: Agent, count: number, received: string[] = []) => {
  await waitUntil(
    async () => {
      const answer = await agent.check();
      if (answer.needs_attention) {
        received.push(...answer.external_events.map((e) => e.item_id));
        const acked = await agent.ack(answer.delivery_id!);
        expect(acked.accepted, acked.reason).toBe(true);
      }
      return received.length >= count;
    },
    { timeoutMs: 20_000, intervalMs: 100, describe: () => `${count} events (got ${received.length})` },
  );
  return received;
};

const sorted = (ids: Iterable<string>) => [...ids].sort();

describe('delivering external events to the agent', () => {
  it('hands all 25 items to an agent that acknowledges, each exactly once, and consumes them on disk', async () => {
    const { project, writeSources } = await projectWith(25);
    await writeSources();
    const agent = await start(project);

    const received = await receiveAll(agent, 25);
    expect(sorted(received)).toEqual(sorted(items(25).map((i) => i.id)));
    expect(new Set(received).size, 'no event twice').toBe(received.length);

    // Nothing more comes, and the journal holds nothing live: all 25 are consumed.
    for (let i = 0; i < 5; i++) expect((await agent.check()).needs_attention).toBe(false);
    const { ids, inserts } = await live(project);
    expect(inserts).toBe(25);
    expect(ids.size).toBe(0);
  }, 60_000);

  it('delivers again, under a new delivery id, what an agent never acknowledged once the lease expired', async () => {
    const { project, writeSources } = await projectWith(3);
    await writeSources();
    const agent = await start(project, { PULSE_LEASE_MS: '1500' });

    const first = await nextDelivery(agent);
    expect(first.external_events).toHaveLength(3);
    expect(first.external_events[0]).toMatchObject({ source: 'cal', urgency: 0.5 });
    expect(first.external_events[0]).not.toHaveProperty('detail');
    const lease = Date.parse(first.lease_expires_at!);
    expect(lease - Date.now()).toBeLessThanOrEqual(1_500);
    // While the lease runs, a check-in sees the same delivery.
    expect((await agent.check()).delivery_id).toBe(first.delivery_id);

    const again = await nextDelivery(agent, 15_000, first.delivery_id!);
    expect(sorted(again.external_events.map((e) => e.id))).toEqual(
      sorted(first.external_events.map((e) => e.id)),
    );

    const late = await agent.ack(first.delivery_id!);
    expect(late).toMatchObject({ accepted: false, code: 'lease_expired' });
    expect(late.reason).toContain(again.delivery_id!);
    expect(await agent.ack('dlv_nope')).toMatchObject({ accepted: false, code: 'unknown_delivery' });
    const acked = await agent.ack(again.delivery_id!);
    expect(acked.accepted).toBe(true);
    expect(sorted(acked.consumed)).toEqual(sorted(again.external_events.map((e) => e.id)));
    expect(await agent.ack(again.delivery_id!)).toMatchObject({
      accepted: false,
      code: 'already_acknowledged',
    });
  }, 60_000);

  it('holds events back while a replan is pending, and delivers them once it is acknowledged', async () => {
    const { project, writeSources } = await projectWith(3);
    const agent = await start(project);
    expect((await agent.check()).needs_replan).toBe(false);
    await save(join(project, '.pulse', 'guidance.md'), '# Guidance\n\nShip the gate.\n');
    const pending = await agent.check();
    expect(pending.needs_replan).toBe(true);

    await writeSources();
    await waitUntil(async () => (await live(project)).ids.size === 3, {
      timeoutMs: 15_000,
      describe: () => 'the 3 items in the inbox',
    });
    for (let i = 0; i < 3; i++) {
      const held = await agent.check();
      expect(held).toMatchObject({ needs_replan: true, needs_attention: false, delivery_id: null });
      expect(held.external_events).toEqual([]);
    }

    const acked = await callTool<{ accepted: boolean }>(clients.at(-1)!, 'pulse_ack_replan', {
      event_id: pending.pending_replan_event_id,
    });
    expect(acked.accepted).toBe(true);
    const delivered = await nextDelivery(agent);
    expect(delivered.needs_replan).toBe(false);
    expect(sorted(delivered.external_events.map((e) => e.item_id))).toEqual(['cal-1', 'cal-2', 'cal-3']);
  }, 60_000);

  it('after kill -9 following an ack, never delivers the acknowledged events again and loses none of the rest', async () => {
    const { project, writeSources } = await projectWith(25);
    await writeSources();
    let agent = await start(project);

    const first = await nextDelivery(agent);
    const acknowledged = first.external_events.map((e) => e.item_id);
    expect((await agent.ack(first.delivery_id!)).accepted).toBe(true);
    // The rest (the catch-up poll's) goes out too, and is never acknowledged before the crash.
    const second = await nextDelivery(agent, 15_000, first.delivery_id!);
    const outstanding = second.external_events.map((e) => e.item_id);
    expect(sorted([...acknowledged, ...outstanding])).toEqual(sorted(items(25).map((i) => i.id)));
    await agent.daemon.kill9();

    agent = await start(project);
    const received = await receiveAll(agent, outstanding.length);
    for (let i = 0; i < 5; i++) expect((await agent.check()).needs_attention).toBe(false);
    expect(sorted(received)).toEqual(sorted(outstanding));
    expect(
      received.filter((id) => acknowledged.includes(id)),
      'nothing acknowledged comes again',
    ).toEqual([]);
  }, 60_000);
});
