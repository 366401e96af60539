import { afterAll, describe, expect, it } from 'vitest';
import {
  callTool,
  connectClient,
  connectLegacyClient,
  runCli,
  startDaemon,
  tempProject,
} from '../support/daemon.js';
import { trackStarted } from '../support/started.js';

/*
 * An agent on the legacy SDK line (`@modelcontextprotocol/sdk` 1.x, a real v1 client, kept here on
 * purpose) beside one on the v2 client, in one project of a spawned daemon: the v1 client speaks
 * 2025-11-25, and each is held by a guidance edit and freed only by its own ack.
 */

const started = trackStarted();
afterAll(started.cleanUp);

interface Decision {
  needs_replan: boolean;
  pending_replan_event_id: string | null;
}

describe('a v1 SDK client on 2025-11-25 beside a v2 client', () => {
  it('holds each on a guidance edit and frees each only by its own ack', async () => {
    const project = await tempProject('pulse-legacy-');
    started.projects.push(project);
    const daemon = await startDaemon(project);
    started.daemons.push(daemon);
    const legacy = await connectLegacyClient(daemon.url, { name: 'old-agent', version: '1.0.0' });
    const modern = await connectClient(daemon.url, { name: 'new-agent', version: '2.0.0' });
    started.clients.push(modern);
    started.streams.push({ close: () => void legacy.client.close() });
    expect(legacy.transport.protocolVersion).toBe('2025-11-25');
    for (const client of [legacy.client, modern]) {
      expect(await callTool<Decision>(client, 'pulse_should_interrupt')).toMatchObject({
        needs_replan: false,
      });
    }

    const guide = await runCli(['guide', 'Only the parser.', '-p', project]);
    const event = /logged as (evt_\S+)\./.exec(guide.stdout)![1]!;
    for (const client of [legacy.client, modern]) {
      expect(await callTool<Decision>(client, 'pulse_should_interrupt')).toMatchObject({
        needs_replan: true,
        pending_replan_event_id: event,
      });
    }

    expect(await callTool(legacy.client, 'pulse_ack_replan', { event_id: event })).toMatchObject({
      accepted: true,
    });
    expect(await callTool<Decision>(legacy.client, 'pulse_should_interrupt')).toMatchObject({
      needs_replan: false,
    });
    expect(await callTool<Decision>(modern, 'pulse_should_interrupt')).toMatchObject({
      needs_replan: true,
      pending_replan_event_id: event,
    });

    expect(await callTool(modern, 'pulse_ack_replan', { event_id: event })).toMatchObject({ accepted: true });
    expect(await callTool<Decision>(modern, 'pulse_should_interrupt')).toMatchObject({ needs_replan: false });
  }, 60_000);
});
