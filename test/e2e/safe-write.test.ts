import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
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

/*
 * Editors' safe writes against a real daemon: the file is missing for a moment between two
 * renames, and pulse logs one modification, never a deletion and a creation; a real `rm` is
 * still a deletion once the replace window has run out.
 */

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

/** A daemon on a fresh project, with the first guidance event acknowledged: nothing is pending. */
const start = async () => {
  project = await tempProject('pulse-safe-write-');
  daemon = await startDaemon(project);
  client = await connectClient(daemon.url);
  const first = await callTool<Decision>(client, 'pulse_should_interrupt');
  if (first.pending_replan_event_id !== null)
    await callTool(client, 'pulse_ack_replan', { event_id: first.pending_replan_event_id });
  expect((await callTool<Decision>(client, 'pulse_should_interrupt')).needs_replan).toBe(false);
  const guidance = join(project, '.pulse', 'guidance.md');
  return { project, daemon, client, guidance, logged: (await readEvents(project)).length };
};

/** A Claude Code PreToolUse hook for a shell command, straight to the daemon; the reason when it is held, else null. */
const hookHeld = async (daemon: RunningDaemon, project: string): Promise<string | null> => {
  const response = await fetch(new URL('/hook/claude/PreToolUse', daemon.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      session_id: 'safe-write',
      cwd: project,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf src' },
    }),
  });
  const answer = (await response.json()) as {
    hookSpecificOutput?: { permissionDecision: string; permissionDecisionReason: string };
  };
  return answer.hookSpecificOutput?.permissionDecision === 'deny'
    ? answer.hookSpecificOutput.permissionDecisionReason
    : null;
};

describe('an editor’s safe write of a tracked file', () => {
  it('logs ten JetBrains saves of guidance.md, a hook asking while each is missing, as modifications only, the last one pending', async () => {
    const { project, daemon, client, guidance, logged } = await start();
    const held: Array<string | null> = [];
    let last = '';
    for (let save = 0; save < 10; save++) {
      last = `# Guidance\n\nSave ${save}: ${'x'.repeat(save)}\n`;
      await writeFile(`${guidance}___jb_tmp___`, last);
      await rename(guidance, `${guidance}___jb_old___`);
      // An agent's tool call lands while the file is missing: its hook makes the daemon look now, and waits out the save.
      const hook = hookHeld(daemon, project);
      await rename(`${guidance}___jb_tmp___`, guidance);
      await unlink(`${guidance}___jb_old___`);
      held.push(await hook);
    }
    const answer = await callTool<Decision>(client, 'pulse_should_interrupt');
    const events = (await readEvents(project)).slice(logged);
    expect(
      events.map((e) => e.kind),
      'no deletion, no creation',
    ).toEqual(events.map(() => 'modified'));
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.path === '.pulse/guidance.md')).toBe(true);
    expect(events.at(-1)!.sha256).toBe(sha256(last));
    expect(answer).toMatchObject({ needs_replan: true, pending_replan_event_id: events.at(-1)!.id });
    expect(
      held.filter((reason) => reason === null),
      'every hook during a save held the tool call',
    ).toEqual([]);
  });

  it('holds a call made while guidance.md is missing for the file that replaces it, and pulse_should_interrupt answers with it', async () => {
    const { project, daemon, client, guidance, logged } = await start();
    await writeFile(`${guidance}___jb_tmp___`, '# Guidance\n\nReplaced.\n');
    await rename(guidance, `${guidance}___jb_old___`);
    const hook = hookHeld(daemon, project);
    const waiting = callTool<Decision>(client, 'pulse_should_interrupt');
    // A slow save: the file stays away longer than a quick hook would wait, shorter than the replace window.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await rename(`${guidance}___jb_tmp___`, guidance);
    await unlink(`${guidance}___jb_old___`);
    const [reason, answer] = await Promise.all([hook, waiting]);
    const events = (await readEvents(project)).slice(logged);
    expect(events.map((e) => [e.kind, e.sha256])).toEqual([
      ['modified', sha256('# Guidance\n\nReplaced.\n')],
    ]);
    expect(reason, 'the hook waited out the save and held the call for its event').toContain(events[0]!.id);
    expect(answer, 'answered with the settled truth, not the acknowledged old state').toMatchObject({
      needs_replan: true,
      pending_replan_event_id: events[0]!.id,
    });
  });

  it('still logs a real rm of guidance.md as deleted once the window has run out, and the file made again as created', async () => {
    const { project, client, guidance, logged } = await start();
    await rm(guidance);
    const answer = await callTool<Decision>(client, 'pulse_should_interrupt');
    const [deleted, ...more] = (await readEvents(project)).slice(logged);
    expect(more).toEqual([]);
    expect(deleted).toMatchObject({ kind: 'deleted', path: '.pulse/guidance.md', sha256: null });
    expect(answer).toMatchObject({ needs_replan: true, pending_replan_event_id: deleted!.id });
    await writeFile(guidance, '# Guidance\n\nBack.\n');
    await callTool(client, 'pulse_should_interrupt');
    expect((await readEvents(project)).slice(logged).map((e) => e.kind)).toEqual(['deleted', 'created']);
  });

  it('logs one modification for each of vim’s, VS Code’s and sed -i’s saves', async () => {
    const { project, client, guidance, logged } = await start();
    const saves: Array<[string, (content: string) => Promise<void>]> = [
      [
        'vim (writebackup: rename the original away, write the new file)',
        async (content) => {
          await rename(guidance, `${guidance}~`);
          await writeFile(guidance, content);
          await unlink(`${guidance}~`);
        },
      ],
      [
        'vim (backupcopy=yes: copy a backup, write in place)',
        async (content) => {
          await copyFile(guidance, `${guidance}~`);
          await writeFile(guidance, content);
          await unlink(`${guidance}~`);
        },
      ],
      ['VS Code (write in place)', (content) => writeFile(guidance, content)],
      [
        'VS Code (atomic: a temp file renamed over)',
        async (content) => {
          await writeFile(`${guidance}.tmp`, content);
          await rename(`${guidance}.tmp`, guidance);
        },
      ],
      [
        'sed -i',
        async (content) => {
          execFileSync('sed', ['-i', `s/^.*$/${content.trim()}/;2,$d`, guidance]);
        },
      ],
    ];
    const seen: Array<[string, string[], boolean]> = [];
    for (const [editor, save] of saves) {
      const before = (await readEvents(project)).length;
      const content = `saved by ${editor.split(' ')[0]} ${seen.length}\n`;
      await save(content);
      await callTool(client, 'pulse_should_interrupt');
      const events = (await readEvents(project)).slice(before);
      seen.push([editor, events.map((e) => e.kind), events.at(-1)?.sha256 === sha256(content)]);
    }
    expect(seen).toEqual(saves.map(([editor]) => [editor, ['modified'], true]));
    expect((await readEvents(project)).slice(logged)).toHaveLength(saves.length);
  });
});
