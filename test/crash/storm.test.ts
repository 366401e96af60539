import type { ChildProcess } from 'node:child_process';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { prng } from '../../sim/prng.js';
import {
  callTool,
  connectClient,
  type LoggedEvent,
  type RunningDaemon,
  removeProject,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { DeliveryLedger, ReplanLedger } from '../support/ledgers.js';
import type { AckAnswer, CheckIn, EventsAck } from '../support/protocol.js';
import {
  eventLogProblems,
  type InboxRow,
  type PulseStore,
  readPulseStore,
  replayInbox,
} from '../support/pulse-store.js';
import { stormSeed } from '../support/random.js';
import { fixtureFiles, startHttpFixture } from '../support/source-fixture.js';
import { saveSources } from '../support/trust.js';

/*
 * The crash suite: `kill -9` the daemon at random moments while the user edits guidance,
 * constraints and the plan, an agent acknowledges replans and deliveries, a source is polled
 * and events are delivered. After every kill the files must parse (a torn last line, repaired
 * on the next start, aside); after every restart no accepted ack is lost, a pending replan is
 * still pending, nothing acknowledged comes again, no seen item is lost, no change is logged twice.
 *   quick (npm test):   50 kills
 *   soak:               PULSE_CRASH_KILLS=500 npm run test:crash
 *   replay:             PULSE_CRASH_SEED=<seed printed> PULSE_CRASH_KILLS=<n> npm run test:crash
 */

const KILLS = Number(process.env.PULSE_CRASH_KILLS ?? 50);
/** Items the source lists by the end; consumed as they come, so the inbox never fills. */
const ITEMS = Math.min(KILLS * 3, 2000);
/** Most lives end within half a second; one in ten lasts long enough for leases to expire. */
const lifeMs = (random: () => number) => (random() < 0.1 ? 1200 + random() * 800 : random() * 500);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const daemons: RunningDaemon[] = [];
const children: ChildProcess[] = [];
const projects: string[] = [];

afterEach(async () => {
  await Promise.all(daemons.splice(0).map((daemon) => daemon.kill9()));
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await Promise.all(projects.splice(0).map(removeProject));
});

/** A project with one HTTP source (the fixture, outliving every daemon) whose list the test grows. */
const setUp = async () => {
  const project = await tempProject('pulse-crash-suite-');
  projects.push(project);
  await mkdir(join(project, '.pulse'));
  const feed = await fixtureFiles(project, 'feed', { items: [] });
  const url = await startHttpFixture(['--control', feed.control], (child) => children.push(child));
  await saveSources(
    project,
    JSON.stringify({
      mcpServers: { feed: { url } },
      sources: [{ name: 'feed', server: 'feed', tool: 'list_items', interval_sec: 1 }],
      // Short leases and few attempts, so that expiries and dead letters happen between kills too.
      reflection: { lease_sec: 1, max_attempts: 2 },
    }),
  );
  return {
    project,
    pulse: join(project, '.pulse'),
    setItems: (items: unknown[]) => feed.setControl({ items }),
  };
};

/** The item ids of the seen store, the live inbox and the dead letters, as one store holds them. */
const itemsOf = (store: PulseStore) => {
  // The source's marks: the server's (`s`, which source listed it first) name the same items again.
  const seen = store.journals['external_seen.jsonl'].rows
    .filter((row) => (row as { s?: string }).s === undefined)
    .map((row) => (row as { k: string }).k.split('\u0000')[1]!);
  const live = replayInbox(store.journals['inbox.jsonl'].rows as InboxRow[]).live.map((e) => e.item_id);
  const dead = store.journals['dead-letters.jsonl'].rows.map((row) => (row as InboxRow).event!.item_id);
  return { seen, live, dead };
};

describe('crash suite', () => {
  it(
    `survives ${KILLS} kill -9s during edits, acks, polls and deliveries: nothing lost, nothing twice, every file whole`,
    async () => {
      const seed = stormSeed('PULSE_CRASH_SEED', 'crash suite');
      const replay = `seed ${seed} (replay: PULSE_CRASH_SEED=${seed} PULSE_CRASH_KILLS=${KILLS} npm run test:crash)`;
      // Each concern draws from its own stream, so kill moments and edits replay whatever the timing.
      const killRandom = prng(seed);
      const editRandom = prng(seed ^ 0x9e3779b9);
      const agentRandom = prng(seed ^ 0x85ebca6b);
      const feedRandom = prng(seed ^ 0xc2b2ae35);
      const { project, pulse, setItems } = await setUp();

      const replans = new ReplanLedger();
      const deliveries = new DeliveryLedger();
      const tornRepaired: Record<string, number> = {};
      let writes = 0;
      let calls = 0;
      let killing = false;
      const problems: string[] = [];
      const fail = (where: string, found: readonly string[]) => {
        for (const problem of found) problems.push(`${where}: ${problem}`);
        expect(problems, replay).toEqual([]);
      };

      // The source's list grows the whole time, across kills, in small bursts.
      const listed: Array<{ id: string; title: string }> = [];
      let growing = true;
      const growth = (async () => {
        while (growing && listed.length < ITEMS) {
          const burst = Math.min(ITEMS - listed.length, 1 + Math.floor(feedRandom() * 5));
          for (let i = 0; i < burst; i++)
            listed.push({ id: `item-${listed.length + 1}`, title: `Item ${listed.length + 1}` });
          await setItems(listed);
          await sleep(150 + feedRandom() * 400);
        }
      })();

      const start = async () => {
        const daemon = await startDaemon(project);
        daemons.push(daemon);
        return daemon;
      };

      /** A check-in, recorded in both ledgers. */
      const checkIn = async (client: Client, where: string) => {
        const answer = await callTool<CheckIn>(client, 'pulse_should_interrupt');
        calls++;
        deliveries.delivered(answer, where);
        return { answer, pending: replans.observe(answer) };
      };

      const afterRestart = async (daemon: RunningDaemon, where: string) => {
        // The start repairs what a kill tore; the inbox does it once its journal is loaded.
        const store = await waitUntil(
          async () => {
            const now = await readPulseStore(project);
            return now.torn.length === 0 && now.problems.length === 0 && now;
          },
          { timeoutMs: 5000, describe: () => 'whole files after the restart' },
        ).catch(async () => readPulseStore(project));
        const found = [...store.problems, ...store.torn.map((name) => `${name} still ends in a torn line`)];
        const client = await connectClient(daemon.url);
        const { answer } = await checkIn(client, where);
        await client.close();
        // Read again: the check-in logs what was saved after the last scan before the kill.
        const { state, journals } = await readPulseStore(project);
        const logged = journals['events.jsonl'].rows as LoggedEvent[];
        found.push(...replans.problems(answer, state, new Set(logged.map((e) => e.id))));
        fail(where, found);
      };

      const afterKill = async (where: string) => {
        const store = await readPulseStore(project);
        for (const name of store.torn) tornRepaired[name] = (tornRepaired[name] ?? 0) + 1;
        const { seen, live, dead } = itemsOf(store);
        const lost = deliveries.lost(seen, live, dead);
        fail(where, [
          ...store.problems,
          ...eventLogProblems(store.journals['events.jsonl'].rows as LoggedEvent[]),
          ...deliveries.problems.splice(0),
          ...(lost.length > 0 ? [`seen items lost: ${lost.join(', ')}`] : []),
        ]);
      };

      const storm = async (daemon: RunningDaemon, life: number) => {
        const where = `life ${life}`;
        const client = await connectClient(daemon.url);
        let alive = true;
        // A call that fails while the daemon still lives is a bug; one the kill cut off is not.
        const guard = (loop: Promise<void>) =>
          loop.catch((error) => {
            if (!killing) problems.push(`${where}: a call failed before the kill: ${error}`);
          });
        const edit = async () => {
          const roll = editRandom();
          const name = roll < 0.25 ? 'guidance.md' : roll < 0.4 ? 'constraints.md' : 'plan.md';
          const content = `${name} life ${life} write ${writes++} ${editRandom().toString(36)}\n`;
          if (editRandom() < 0.5) {
            await writeFile(join(pulse, name), content);
          } else {
            const temp = join(pulse, `.${name}.${writes}.tmp`);
            await writeFile(temp, content);
            await rename(temp, join(pulse, name));
          }
        };
        // The user saves in bursts of 1 to 3, each followed by a check-in, so acks can win.
        const editor = async () => {
          while (alive) {
            for (let burst = Math.floor(editRandom() * 3); burst >= 0 && alive; burst--) await edit();
            await checkIn(client, where);
          }
        };
        const agent = async () => {
          while (alive) {
            const { answer, pending } = await checkIn(client, where);
            if (pending !== null) {
              await writeFile(join(pulse, 'plan.md'), `plan for ${pending}\n`);
              await replans.ack(pending, () =>
                callTool<AckAnswer>(client, 'pulse_ack_replan', { event_id: pending }),
              );
            }
            // Now and then the agent forgets a delivery (its lease runs out) or puts one event off.
            if (!answer.needs_attention || agentRandom() < 0.15) continue;
            const ids = answer.external_events.map((e) => e.id);
            const later = new Set(agentRandom() < 0.2 ? ids.slice(0, 1) : []);
            const outcomes = Object.fromEntries([...later].map((id) => [id, 'later']));
            await deliveries.ack(ids, later, () =>
              callTool<EventsAck>(client, 'pulse_ack_events', { delivery_id: answer.delivery_id, outcomes }),
            );
          }
        };
        const reader = async () => {
          while (alive) {
            await client.readResource({ uri: 'pulse://context/latest' });
            calls++;
            await checkIn(client, where);
          }
        };
        const loops = [editor(), agent(), reader()].map(guard);
        await sleep(lifeMs(killRandom));
        killing = true;
        await daemon.kill9();
        alive = false;
        // Closing the client rejects the calls the kill cut off (the SDK would retry them for a minute).
        await client.close().catch(() => {});
        await Promise.all(loops);
        killing = false;
        expect(problems, replay).toEqual([]);
      };

      const startedAt = Date.now();
      try {
        let daemon = await start();
        for (let life = 1; life <= KILLS; life++) {
          await storm(daemon, life);
          await afterKill(`after kill ${life}`);
          daemon = await start();
          await afterRestart(daemon, `after restart ${life}`);
        }
      } finally {
        growing = false;
        await growth;
      }

      // The last life: no more kills; the agent works until every listed item is dealt with.
      await setItems(listed);
      const daemon = daemons.at(-1)!;
      const client = await connectClient(daemon.url);
      const everything = listed.map((item) => item.id);
      let last = 'not read yet';
      await waitUntil(
        async () => {
          const { answer, pending } = await checkIn(client, 'the last life');
          if (pending !== null) {
            await replans.ack(pending, () =>
              callTool<AckAnswer>(client, 'pulse_ack_replan', { event_id: pending }),
            );
          }
          if (answer.needs_attention) {
            const ids = answer.external_events.map((e) => e.id);
            await deliveries.ack(ids, new Set(), () =>
              callTool<EventsAck>(client, 'pulse_ack_events', { delivery_id: answer.delivery_id }),
            );
          }
          const { seen, live, dead } = itemsOf(await readPulseStore(project));
          const lost = deliveries.lost(everything, [], dead);
          last = `${live.length} in the inbox, ${seen.length} seen, ${dead.length} dead, ${lost.length} not dealt with (${lost.slice(0, 5).join(', ')})`;
          return live.length === 0 && lost.length === 0 && seen.length === ITEMS;
        },
        {
          timeoutMs: 30_000,
          intervalMs: 50,
          describe: () => `every one of the ${ITEMS} items dealt with (${replay}); last seen: ${last}`,
        },
      );
      await client.close();
      expect(await daemon.stop()).toBe(0);
      const store = await readPulseStore(project);
      const { dead } = itemsOf(store);
      fail('after the last stop', [
        ...store.problems,
        ...store.torn.map((name) => `${name} ends in a torn line after a clean stop`),
        ...eventLogProblems(store.journals['events.jsonl'].rows as LoggedEvent[]),
        ...deliveries.problems,
      ]);
      expect(replans.acceptedCount, `${replay}: no replan ack was accepted at all`).toBeGreaterThan(0);
      expect(deliveries.acceptedAcks, `${replay}: no delivery ack was accepted at all`).toBeGreaterThan(0);
      const torn = Object.entries(tornRepaired).map(([name, count]) => `${name} ${count}`);
      console.log(
        `crash suite: seed ${seed}, ${KILLS} kills survived in ${((Date.now() - startedAt) / 1000).toFixed(1)} s, ` +
          `${writes} edits, ${calls} calls, replan acks ${replans.acceptedCount} accepted / ${replans.refusedCount} refused, ` +
          `${deliveries.deliveries} deliveries seen, event acks ${deliveries.acceptedAcks} accepted / ${deliveries.refusedAcks} refused, ` +
          `${ITEMS} items listed: ${deliveries.consumed.size} consumed, ${dead.length} dead-lettered, ` +
          `torn last lines repaired: ${torn.join(', ') || 'none'}; lost 0, acknowledged again 0, duplicate events 0`,
      );
    },
    60_000 + KILLS * 5_000,
  );
});
