import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  callTool,
  connectClient,
  type RunningDaemon,
  removeProject,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { readJsonLines } from '../support/files.js';
import type { CheckIn } from '../support/protocol.js';
import { readPulseStore } from '../support/pulse-store.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { saveSources } from '../support/trust.js';

/*
 * What a kill in the middle of an append leaves, one file at a time, where the storm rarely gets
 * it: the next start must cut the torn line, so the next append does not share its line.
 */

const daemons: RunningDaemon[] = [];
const projects: string[] = [];

afterEach(async () => {
  await Promise.all(daemons.splice(0).map((daemon) => daemon.kill9()));
  await Promise.all(projects.splice(0).map(removeProject));
});

describe('torn last lines', () => {
  it('keeps a dead letter written after a torn last line of dead-letters.jsonl', async () => {
    const project = await tempProject('pulse-torn-dead-');
    projects.push(project);
    const pulse = join(project, '.pulse');
    await mkdir(pulse);
    const feed = await fixtureFiles(project, 'feed', {
      items: [{ id: 'late-1', title: 'Never acknowledged' }],
    });
    await saveSources(
      project,
      JSON.stringify({
        mcpServers: { feed: fixtureCommand(feed.args) },
        sources: [{ name: 'feed', server: 'feed', tool: 'list_items', interval_sec: 300 }],
        reflection: { lease_sec: 1, max_attempts: 1 },
      }),
    );
    const old = {
      at: '2026-01-01T00:00:00.000Z',
      reason: 'max_attempts',
      event: {
        id: 'ext_old',
        source: 'feed',
        item_id: 'old',
        title: 'Old',
        starts_at: null,
        detail: null,
        received_at: '2026-01-01T00:00:00.000Z',
        attempts: 1,
      },
    };
    await writeFile(
      join(pulse, 'dead-letters.jsonl'),
      `${JSON.stringify(old)}\n{"at":"2026-01-02T00:00:00.0`,
    );

    let daemon = await startDaemon(project);
    daemons.push(daemon);
    const client = await connectClient(daemon.url);
    // Delivered once and never acknowledged: with one attempt, its lease's end makes it a dead letter.
    await waitUntil(async () => (await callTool<CheckIn>(client, 'pulse_should_interrupt')).needs_attention, {
      timeoutMs: 10_000,
      intervalMs: 100,
      describe: () => 'the delivery',
    });
    await waitUntil(
      async () => (await readPulseStore(project)).journals['dead-letters.jsonl'].rows.length >= 2,
      {
        timeoutMs: 10_000,
        describe: () => 'the second dead letter on disk',
      },
    );
    await client.close();
    expect(await daemon.stop()).toBe(0);

    const rows = await readJsonLines<typeof old>(join(pulse, 'dead-letters.jsonl'));
    expect(rows.map((row) => row.event.item_id)).toEqual(['old', 'late-1']);
    daemon = await startDaemon(project);
    daemons.push(daemon);
    // Both are in view again once the inbox has loaded.
    const titles = await waitUntil(
      async () => {
        const status = (await (await fetch(new URL('/status', daemon.url))).json()) as {
          gate: { dead_letters: Array<{ title: string }> };
        };
        return status.gate.dead_letters.length >= 2 && status.gate.dead_letters.map((d) => d.title);
      },
      { describe: () => 'the dead letters in /status' },
    );
    expect(titles).toEqual(['Old', 'Never acknowledged']);
  });
});
