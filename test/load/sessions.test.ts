import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { prng } from '../../sim/prng.js';
import { callTool, connectClient, readEvents, startDaemon, tempProject } from '../support/daemon.js';
import { save } from '../support/files.js';
import type { AckAnswer, CheckIn, EventsAck } from '../support/protocol.js';
import { stormSeed } from '../support/random.js';
import { fixtureFiles, startHttpFixture } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';

/*
 * Load: many MCP session clients call at once (pulse_should_interrupt, pulse_ack_replan, reads
 * of the context, pulse_ack_events) while the user keeps saving guidance.md and a source keeps
 * listing new items. Every answer must be a result (a refused ack has a `code`; that is an
 * answer, not an error), and every call must see every guidance save that returned before it.
 *   quick (npm test):  50 clients x 40 calls
 *   full:              npm run test:load (50 x 200), or PULSE_LOAD_CLIENTS / PULSE_LOAD_CALLS
 */

const FULL = process.env.PULSE_LOAD === 'full';
const CLIENTS = Number(process.env.PULSE_LOAD_CLIENTS ?? 50);
const CALLS = Number(process.env.PULSE_LOAD_CALLS ?? (FULL ? 200 : 40));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const guidance = (version: number) => `# Guidance\n\nguidance v${version}: ship it another way.\n`;

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

const started = trackStarted();

afterEach(started.cleanUp);

type Kind = 'should_interrupt' | 'ack_replan' | 'read_context' | 'ack_events';

/** A check-in's answer, kept to be held to the guidance saves that returned before it was sent. */
interface Sighting {
  client: number;
  /** The last guidance version whose save returned before the call. */
  floor: number;
  /** The guidance event the answer says is pending, else the one last acknowledged. */
  eventId: string | null;
}

describe('load', () => {
  it(`serves ${CLIENTS} session clients x ${CALLS} mixed calls while guidance changes and a source delivers: no error, no missed replan`, async () => {
    const seed = stormSeed('PULSE_LOAD_SEED', 'load');
    const project = await tempProject('pulse-load-');
    started.projects.push(project);
    const pulse = join(project, '.pulse');
    await mkdir(pulse);
    const feed = await fixtureFiles(project, 'feed', { items: [] });
    const url = await startHttpFixture(['--control', feed.control], (child) => started.children.push(child));
    await saveSources(
      project,
      JSON.stringify({
        mcpServers: { feed: { url } },
        sources: [{ name: 'feed', server: 'feed', tool: 'list_items', interval_sec: 1 }],
      }),
    );
    await save(join(pulse, 'guidance.md'), guidance(0));
    const daemon = await startDaemon(project);
    started.daemons.push(daemon);
    const clients: Client[] = await Promise.all(
      Array.from({ length: CLIENTS }, () => connectClient(daemon.url)),
    );

    // The user saves guidance.md again and again; `saved` is the last version whose save returned.
    let saved = 0;
    let running = true;
    const versionOfSha = new Map<string, number>([[sha256(guidance(0)), 0]]);
    const editor = (async () => {
      for (let version = 1; running; version++) {
        versionOfSha.set(sha256(guidance(version)), version);
        await save(join(pulse, 'guidance.md'), guidance(version));
        saved = version;
        await sleep(100);
      }
    })();
    // The source lists two more items every 200 ms.
    const listed: Array<{ id: string; title: string }> = [];
    const source = (async () => {
      while (running) {
        for (let i = 0; i < 2; i++)
          listed.push({ id: `load-${listed.length + 1}`, title: `Load ${listed.length + 1}` });
        await feed.setControl({ items: listed });
        await sleep(200);
      }
    })();

    const latencies: Record<Kind, number[]> = {
      should_interrupt: [],
      ack_replan: [],
      read_context: [],
      ack_events: [],
    };
    const errors: string[] = [];
    const sightings: Sighting[] = [];
    const staleReads: string[] = [];
    const refusals = new Map<string, number>();
    let acceptedReplans = 0;
    let acceptedDeliveries = 0;
    let deliveries = 0;

    const session = async (index: number) => {
      const client = clients[index]!;
      const random = prng(seed + index);
      let pending: string | null = null;
      let delivery: string | null = null;
      const refused = (code: string | undefined) => {
        const key = code ?? 'no code';
        refusals.set(key, (refusals.get(key) ?? 0) + 1);
        if (code === undefined) errors.push(`client ${index}: an ack was refused without a code`);
      };
      const call: Record<Kind, (floor: number) => Promise<void>> = {
        should_interrupt: async (floor) => {
          const answer = await callTool<CheckIn>(client, 'pulse_should_interrupt');
          pending = answer.pending_replan_event_id;
          const eventId = answer.needs_replan ? pending : answer.last_acknowledged_event_id;
          sightings.push({ client: index, floor, eventId });
          if (answer.needs_attention) {
            deliveries++;
            delivery = answer.delivery_id;
          }
        },
        ack_replan: async () => {
          const reply = await callTool<AckAnswer>(client, 'pulse_ack_replan', {
            event_id: pending ?? 'evt_none',
          });
          if (reply.accepted) acceptedReplans++;
          else refused(reply.code);
        },
        read_context: async (floor) => {
          const result = await client.readResource({ uri: 'pulse://context/latest' });
          const text = (result.contents[0] as { text: string }).text;
          const version = Number(/guidance v(\d+):/.exec(text)?.[1] ?? -1);
          if (version < floor)
            staleReads.push(`client ${index} read guidance v${version} after v${floor} was saved`);
        },
        ack_events: async () => {
          const reply = await callTool<EventsAck>(client, 'pulse_ack_events', {
            delivery_id: delivery ?? 'dlv_none',
          });
          if (reply.accepted) acceptedDeliveries++;
          else refused(reply.code);
          delivery = null;
        },
      };
      for (let i = 0; i < CALLS; i++) {
        const roll = random();
        const kind: Kind =
          roll < 0.4
            ? 'should_interrupt'
            : roll < 0.6
              ? 'ack_replan'
              : roll < 0.85
                ? 'read_context'
                : 'ack_events';
        const floor = saved;
        const started = performance.now();
        try {
          await call[kind](floor);
        } catch (error) {
          const cause = (error as { cause?: unknown }).cause;
          errors.push(`client ${index}, call ${i} (${kind}): ${error}${cause ? ` (${cause})` : ''}`);
        }
        latencies[kind].push(performance.now() - started);
      }
    };

    const startedAt = performance.now();
    await Promise.all(clients.map((_, index) => session(index)));
    const seconds = (performance.now() - startedAt) / 1000;
    running = false;
    await Promise.all([editor, source]);
    await Promise.all(clients.map((client) => client.close()));

    // Which guidance version each logged event is, to hold each check-in to the saves before it.
    const versionOfEvent = new Map<string, number>();
    for (const event of await readEvents(project)) {
      const version = event.sha256 === null ? undefined : versionOfSha.get(event.sha256);
      if (event.path === '.pulse/guidance.md' && version !== undefined) versionOfEvent.set(event.id, version);
    }
    const missed = sightings.filter(
      (s) => (s.eventId === null ? 0 : (versionOfEvent.get(s.eventId) ?? -1)) < s.floor,
    );

    const all = Object.values(latencies)
      .flat()
      .sort((a, b) => a - b);
    const figures = (Object.entries(latencies) as Array<[Kind, number[]]>).map(([kind, values]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return `${kind} ${values.length} (p50 ${percentile(sorted, 50).toFixed(0)} / p99 ${percentile(sorted, 99).toFixed(0)} ms)`;
    });
    const refused = [...refusals].map(([code, count]) => `${code} ${count}`).join(', ');
    console.log(
      `load: seed ${seed}, ${CLIENTS} clients x ${CALLS} calls = ${all.length} calls in ${seconds.toFixed(1)} s ` +
        `(${(all.length / seconds).toFixed(0)}/s) while ${saved} guidance saves and ${listed.length} listed items; ` +
        `p50 ${percentile(all, 50).toFixed(0)} ms, p99 ${percentile(all, 99).toFixed(0)} ms; ${figures.join('; ')}; ` +
        `replans acked ${acceptedReplans}, deliveries seen ${deliveries}, acked ${acceptedDeliveries}, refused acks: ${refused || 'none'}; ` +
        `errors ${errors.length}, missed replans ${missed.length} of ${sightings.length} check-ins, stale context reads ${staleReads.length}`,
    );

    if (errors.length > 0) console.log(daemon.output().slice(-3000));
    expect(all).toHaveLength(CLIENTS * CALLS);
    expect(errors.slice(0, 5), `seed ${seed}: every answer is a result`).toEqual([]);
    expect(missed.slice(0, 5), `seed ${seed}: every check-in sees every save before it`).toEqual([]);
    expect(staleReads.slice(0, 5), `seed ${seed}: every read shows every save before it`).toEqual([]);
    expect(acceptedReplans, 'some replan acks were accepted').toBeGreaterThan(0);
    expect(saved, 'guidance changed during the run').toBeGreaterThan(5);
  }, 600_000);
});
