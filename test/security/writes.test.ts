import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connectClient, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { save } from '../support/files.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';

/*
 * pulse writes only inside `.pulse/`: a daemon taken through a replan, an ack, a delivery, a
 * focus, the CLI and hooks, and a shutdown leaves every other file and folder of the project, its
 * siblings and its parent as they were, down to their mtimes. (`pulse setup --write` writes the
 * agents' files outside `.pulse/` by design, and is not part of this.)
 */

const started = trackStarted();

afterEach(started.cleanUp);

/** Every entry under `root` but `skip`, with its kind, size and mtime (a folder's changes when an entry comes or goes). */
const snapshot = async (root: string, skip: string): Promise<Record<string, string>> => {
  const entries: Record<string, string> = {};
  const walk = async (dir: string) => {
    const info = await stat(dir);
    entries[relative(root, dir) || '.'] = `dir ${info.mtimeMs}`;
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (path === skip) continue;
      if (entry.isDirectory()) await walk(path);
      else {
        const file = await stat(path);
        entries[relative(root, path)] =
          `${entry.isSymbolicLink() ? 'link' : 'file'} ${file.size} ${file.mtimeMs}`;
      }
    }
  };
  await walk(root);
  return entries;
};

interface Answer {
  needs_replan: boolean;
  pending_replan_event_id: string | null;
  needs_attention: boolean;
  delivery_id: string | null;
}

describe('writes', () => {
  it('touch nothing outside .pulse/ through a replan, an ack, a delivery, focus, the CLI, a hook and shutdown', async () => {
    const parent = await tempProject('pulse-writes-');
    // The test's own files (temp saves, the source fixture's record) live apart from what is watched.
    const outside = await tempProject('pulse-writes-test-');
    started.projects.push(parent, outside);
    const project = join(parent, 'project');
    const pulseDir = join(project, '.pulse');
    await mkdir(join(project, 'src'), { recursive: true });
    await mkdir(join(parent, 'sibling'));
    await writeFile(join(project, 'README.md'), '# A project\n');
    await writeFile(join(project, 'src', 'main.ts'), 'export {};\n');
    await writeFile(join(parent, 'sibling', 'notes.md'), 'not pulse\n');
    await mkdir(pulseDir);
    const cal = await fixtureFiles(outside, 'cal', { items: [{ id: 'cal-1', title: 'Standup moved' }] });
    await saveSources(
      project,
      JSON.stringify({
        mcpServers: { cal: fixtureCommand(cal.args) },
        sources: [{ name: 'cal', server: 'cal', tool: 'list_events', interval_sec: 300 }],
      }),
      outside,
    );
    const before = await snapshot(parent, pulseDir);

    const daemon = await startDaemon(project);
    started.daemons.push(daemon);
    const client = await connectClient(daemon.url);
    started.clients.push(client);

    await save(join(pulseDir, 'guidance.md'), '# Guidance\n\nUse the new API.\n', outside);
    const pending = await callTool<Answer>(client, 'pulse_should_interrupt', {});
    expect(pending.needs_replan).toBe(true);
    await save(join(pulseDir, 'plan.md'), '# Plan\n\n1. Use the new API.\n', outside);
    const acked = await callTool<{ accepted: boolean }>(client, 'pulse_ack_replan', {
      event_id: pending.pending_replan_event_id,
    });
    expect(acked.accepted).toBe(true);

    const delivery = await waitUntil(
      async () => {
        const answer = await callTool<Answer>(client, 'pulse_should_interrupt', {});
        return answer.needs_attention && answer;
      },
      { timeoutMs: 15_000, intervalMs: 100, describe: () => 'a delivery' },
    );
    const settled = await callTool<{ accepted: boolean }>(client, 'pulse_ack_events', {
      delivery_id: delivery.delivery_id,
    });
    expect(settled.accepted).toBe(true);

    for (const args of [['focus', '30m'], ['focus', 'off'], ['status'], ['sources', 'list']]) {
      const run = await runCli([...args, '-p', project]);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    }
    const hook = await runCli(['hook', 'claude', '-p', project], {
      input: JSON.stringify({
        session_id: 's',
        cwd: project,
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'ls' },
      }),
    });
    expect(hook.code).toBe(0);
    expect(hook.stderr).toBe('');
    expect(await daemon.stop()).toBe(0);

    expect(await snapshot(parent, pulseDir)).toEqual(before);
    // And the daemon did write where it may: its log, state and inbox.
    const written = await readdir(pulseDir);
    expect(written).toEqual(
      expect.arrayContaining(['pulse.log', 'state.json', 'events.jsonl', 'inbox.jsonl']),
    );
  }, 60_000);
});
