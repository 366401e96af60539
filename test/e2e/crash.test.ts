import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  callTool,
  connectClient,
  type RunningDaemon,
  readEvents,
  removeProject,
  startDaemon,
  tempProject,
} from '../support/daemon.js';
import type { Decision } from '../support/protocol.js';
import { eventLogProblems } from '../support/pulse-store.js';

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

// The kill -9 storm (edits, acks, polls and deliveries) is the crash suite: test/crash/storm.test.ts.
/** Writes a file whole by rename, so a scan under load never sees it half written (this test is about the log). */
const replaceWhole = async (path: string, text: string) => {
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
};

describe('crash safety', () => {
  it('repairs a torn last line in events.jsonl on start, warns about it, and keeps logging', async () => {
    const project = await tempProject('pulse-torn-');
    projects.push(project);
    const pulse = join(project, '.pulse');
    let daemon = await track(project);
    await replaceWhole(join(pulse, 'guidance.md'), 'first guidance\n');
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

    await replaceWhole(join(pulse, 'guidance.md'), 'second guidance\n');
    client = await connectClient(daemon.url);
    const after = await callTool<Decision>(client, 'pulse_should_interrupt');
    await client.close();
    expect(after.needs_replan).toBe(true);
    expect(after.pending_replan_event_id).not.toBe(before.pending_replan_event_id);
    const events = await readEvents(project);
    expect(events.map((e) => e.id)).toEqual([before.pending_replan_event_id, after.pending_replan_event_id]);
    expect(eventLogProblems(events)).toEqual([]);
  });
});
