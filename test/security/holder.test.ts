import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connectClient, oneShot, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';

/*
 * A delivery of external events belongs to the agent that took it: another agent on the same
 * daemon cannot acknowledge it (and so cannot settle events the user was never told of).
 */

const started = trackStarted();

afterEach(started.cleanUp);

interface Answer {
  needs_attention: boolean;
  delivery_id: string | null;
}
interface AckAnswer {
  accepted: boolean;
  code?: string;
  reason: string;
  consumed: string[];
}

describe('acknowledging a delivery', () => {
  it('is refused with not_holder to any agent but the one holding it, which then acks it', async () => {
    const project = await tempProject('pulse-holder-');
    started.projects.push(project);
    await mkdir(join(project, '.pulse'));
    const cal = await fixtureFiles(project, 'cal', { items: [{ id: 'cal-1', title: 'Deploy failed' }] });
    await saveSources(
      project,
      JSON.stringify({
        mcpServers: { cal: fixtureCommand(cal.args) },
        sources: [{ name: 'cal', server: 'cal', tool: 'list_events', interval_sec: 300 }],
      }),
    );
    const daemon = await startDaemon(project);
    started.daemons.push(daemon);
    const [holder, other] = [await connectClient(daemon.url), await connectClient(daemon.url)];
    started.clients.push(holder!, other!);

    // The holder checks in under a name, from its session: its session is who holds the delivery.
    const delivery = await waitUntil(
      async () => {
        const answer = await callTool<Answer>(holder!, 'pulse_should_interrupt', { agent: 'claude' });
        return answer.needs_attention && answer;
      },
      { timeoutMs: 15_000, intervalMs: 100, describe: () => 'a delivery' },
    );
    const deliveryId = delivery.delivery_id!;

    const bySession = await callTool<AckAnswer>(other!, 'pulse_ack_events', { delivery_id: deliveryId });
    expect(bySession).toMatchObject({ accepted: false, code: 'not_holder', consumed: [] });
    expect(bySession.reason).toMatch(
      new RegExp(`^Delivery ${deliveryId} is out to session:[0-9a-f-]+, not to you`),
    );
    const byName = await callTool<AckAnswer>(other!, 'pulse_ack_events', {
      delivery_id: deliveryId,
      agent: 'codex',
    });
    expect(byName).toMatchObject({ accepted: false, code: 'not_holder' });
    const byOneShot = await oneShot(daemon.url, 'tools/call', {
      name: 'pulse_ack_events',
      arguments: { delivery_id: deliveryId },
    });
    expect(byOneShot.body.result?.structuredContent).toMatchObject({ accepted: false, code: 'not_holder' });

    // Still out to the holder, which acknowledges it from its session without repeating the name.
    const status = (await (await fetch(new URL('/status', daemon.url))).json()) as {
      gate: { delivery: { delivery_id: string; holder: string } | null };
    };
    expect(status.gate.delivery).toMatchObject({
      delivery_id: deliveryId,
      holder: expect.stringMatching(/^session:/),
    });
    const acked = await callTool<AckAnswer>(holder!, 'pulse_ack_events', { delivery_id: deliveryId });
    expect(acked).toMatchObject({ accepted: true, consumed: [expect.stringMatching(/^ext_/)] });
  }, 60_000);
});
