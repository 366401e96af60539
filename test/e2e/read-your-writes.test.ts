import { createHash } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
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

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let daemon: RunningDaemon | undefined;
let client: Client | undefined;
let project: string | undefined;

afterEach(async () => {
  await client?.close().catch(() => {});
  await daemon?.kill9();
  if (project) await removeProject(project);
  client = daemon = project = undefined;
});

const start = async () => {
  project = await tempProject('pulse-ryw-');
  daemon = await startDaemon(project);
  client = await connectClient(daemon.url);
  return { project, daemon, client };
};

describe('read-your-writes', () => {
  it('answers every should_interrupt called right after a guidance write with that write, 100 rounds in a row', async () => {
    const { project, client } = await start();
    const guidance = join(project, '.pulse', 'guidance.md');
    const rounds: Array<{ round: number; sha: string; answer: Decision }> = [];
    for (let round = 0; round < 100; round++) {
      // Same length every round: a change must be seen even when size and mtime tick do not move.
      const content = `# Guidance\n\nround ${String(round).padStart(3, '0')}\n`;
      await writeFile(guidance, content);
      const answer = await callTool<Decision>(client, 'pulse_should_interrupt');
      rounds.push({ round, sha: sha256(content), answer });
    }
    const shaById = new Map((await readEvents(project)).map((event) => [event.id, event.sha256]));
    const stale = rounds.filter(
      ({ sha, answer }) =>
        !answer.needs_replan ||
        answer.pending_replan_event_id === null ||
        shaById.get(answer.pending_replan_event_id) !== sha,
    );
    expect(
      stale.length,
      `${stale.length} of 100 answers were stale (rounds ${stale.map((s) => s.round).join(', ')})`,
    ).toBe(0);
  });

  it('logs one event per change: no repeated hash, no unknown hash, the final content last, no duplicate id', async () => {
    const { project, client } = await start();
    const written = { 'guidance.md': new Set<string>(), 'plan.md': new Set<string>() };
    const last = { 'guidance.md': '', 'plan.md': '' };
    let stopCalling = false;
    const caller = (async () => {
      let calls = 0;
      while (!stopCalling) {
        await callTool(client, 'pulse_should_interrupt');
        calls++;
      }
      return calls;
    })();
    const writer = async (name: 'guidance.md' | 'plan.md', seed: number) => {
      for (let i = 0; i < 150; i++) {
        // Some writes repeat the previous bytes (no change), some go back to older content (a change).
        const k = i % 3 === 2 ? i - 1 : i % 5 === 4 ? i - 2 : i;
        const content = `${name} edit ${seed + k}\n${'x'.repeat(k % 7)}`;
        // Saved as editors do atomically (temp file, then rename), so every state of the file on
        // disk is one of the contents written; an in-place write passes through an empty file.
        const temp = join(project, '.pulse', `.${name}.${i}.tmp`);
        await writeFile(temp, content);
        await rename(temp, join(project, '.pulse', name));
        written[name].add(sha256(content));
        last[name] = content;
      }
    };
    await Promise.all([writer('guidance.md', 0), writer('plan.md', 1000)]);
    stopCalling = true;
    const calls = await caller;
    expect(calls).toBeGreaterThan(0);
    // The tool reconciles first, so after this call every write above is in the log.
    await callTool(client, 'pulse_should_interrupt');

    const events = await readEvents(project);
    const ids = events.map((event) => event.id);
    expect(new Set(ids).size, 'event ids are unique').toBe(ids.length);
    for (const name of ['guidance.md', 'plan.md'] as const) {
      const ofFile = events.filter((event) => event.path === `.pulse/${name}`);
      expect(ofFile.length).toBeGreaterThan(0);
      const repeated = ofFile.filter((event, i) => i > 0 && event.sha256 === ofFile[i - 1]!.sha256);
      expect(repeated, `${name}: consecutive events with the same sha256`).toEqual([]);
      const unknown = ofFile.filter((event) => event.sha256 === null || !written[name].has(event.sha256));
      expect(unknown, `${name}: events whose sha256 matches no content written`).toEqual([]);
      expect(ofFile.at(-1)!.sha256, `${name}: the last event is the final content`).toBe(sha256(last[name]));
    }
  });
});
