import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connectClient, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import type { Decision } from '../support/protocol.js';
import { trackStarted } from '../support/started.js';

/*
 * A user stops the daemon the moment an agent has acknowledged: the writes the ack started
 * (state.json and the others replaced whole through a temp file) finish or leave nothing behind.
 */

const ROUNDS = 10;
const started = trackStarted();
afterEach(() => started.cleanUp());

/** The event the agent owes, once the daemon has seen the guidance written before. */
const pendingEvent = (agent: Client): Promise<string> =>
  waitUntil(
    async () => (await callTool<Decision>(agent, 'pulse_should_interrupt')).pending_replan_event_id ?? false,
    { timeoutMs: 15_000, describe: () => 'a replan pending for the new guidance' },
  );

describe('stopping the daemon right after an ack', () => {
  it(`leaves no temp file in .pulse/ (${ROUNDS} stops, each the moment the ack is answered)`, async () => {
    const project = await tempProject('pulse-stop-ack-');
    started.projects.push(project);
    for (let round = 0; round < ROUNDS; round++) {
      const daemon = await startDaemon(project);
      started.daemons.push(daemon);
      const client = await connectClient(daemon.url);
      started.clients.push(client);
      await writeFile(join(project, '.pulse', 'guidance.md'), `# Guidance\n\nRound ${round}.\n`);
      const eventId = await pendingEvent(client);
      await writeFile(join(project, '.pulse', 'plan.md'), `# Plan\n\nFollow round ${round}.\n`);
      await callTool(client, 'pulse_ack_replan', { event_id: eventId });
      expect(await daemon.stop('SIGTERM'), `round ${round}: the daemon exits 0`).toBe(0);
      await client.close().catch(() => {});
      const left = (await readdir(join(project, '.pulse'))).filter((name) => name.endsWith('.tmp'));
      expect(left, `round ${round}: temp files left in .pulse/`).toEqual([]);
    }
  }, 120_000);
});
