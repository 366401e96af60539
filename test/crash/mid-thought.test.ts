import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connectClient, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import type { CheckIn, EventsAck } from '../support/protocol.js';
import { readInbox, readPulseStore } from '../support/pulse-store.js';
import { calendarSource } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';

/*
 * kill -9 while the model is thinking: the drained events are out of the inbox in memory only,
 * so the journal must still hold them, and the next start must judge them again and lose none.
 */

const started = trackStarted();
const models: ModelServer[] = [];
afterEach(async () => {
  await started.cleanUp();
  await Promise.all(models.splice(0).map((m) => m.close()));
});

const TITLES = [
  'URGENT: pager fired for checkout',
  'Quarterly report ready',
  'Lunch menu',
  'URGENT: disk 95% full',
];

describe('a kill -9 in the middle of a thought', () => {
  it('loses no event: after the restart every one is judged again, the urgent ones delivered once, the rest consumed', async () => {
    const model = await startModelServer({ fallback: { kind: 'hang' } });
    models.push(model);
    const project = await tempProject('pulse-mid-thought-');
    started.projects.push(project);
    await calendarSource(project, TITLES, {
      thinker: 'model',
      model: { base_url: model.baseUrl, model: 'slow-model' },
    });

    const first = await startDaemon(project);
    started.daemons.push(first);
    // The model has the events and does not answer: the daemon is in the middle of the thought.
    await model.received(1);
    expect(model.requests[0]!.events.map((e) => e.title)).toEqual(TITLES);
    await first.kill9();

    const killed = await readPulseStore(project);
    expect(killed.problems).toEqual([]);
    const { live } = await readInbox(project);
    expect(
      live.map((e) => e.title),
      'the journal still holds every event of the thought',
    ).toEqual(TITLES);

    model.setFallback({ kind: 'json' });
    const second = await startDaemon(project);
    started.daemons.push(second);
    const agent = await connectClient(second.url);
    started.clients.push(agent);

    const delivered: string[] = [];
    await waitUntil(
      async () => {
        const answer = await callTool<CheckIn>(agent, 'pulse_should_interrupt', {});
        if (answer.needs_attention) {
          delivered.push(...answer.external_events.map((e) => e.title));
          const ack = await callTool<EventsAck>(agent, 'pulse_ack_events', {
            delivery_id: answer.delivery_id,
          });
          expect(ack.accepted).toBe(true);
        }
        return (await readInbox(project)).live.length === 0 && delivered.length > 0;
      },
      { timeoutMs: 20_000, intervalMs: 100, describe: () => 'every event judged after the restart' },
    );

    expect(delivered.sort()).toEqual([TITLES[0], TITLES[3]].sort());
    // Asked again after the restart, with the same four events, which went nowhere else.
    expect(model.requests.at(-1)!.events.map((e) => e.title)).toEqual(TITLES);
    const context = (
      (await agent.readResource({ uri: 'pulse://context/latest' })).contents[0] as { text: string }
    ).text;
    for (const title of [TITLES[1], TITLES[2]]) {
      expect(context).toContain(
        `"${title}": below the threshold, consumed silently (thinker: "routine, can wait")`,
      );
    }
    const { inserts } = await readInbox(project);
    expect(
      inserts.map((e) => e.title),
      'each item entered the inbox once',
    ).toEqual(TITLES);
    expect((await readPulseStore(project)).journals['dead-letters.jsonl'].rows).toEqual([]);
  });
});
