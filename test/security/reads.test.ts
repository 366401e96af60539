import { readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connectClient, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { PLANTED_SECRET } from '../support/planted-secret.js';
import { trackStarted } from '../support/started.js';

/*
 * A cloned repository whose `.pulse/task.md` is a symlink to a file elsewhere (~/.ssh/id_rsa)
 * must not get that file's text into `pulse://context/latest`, which the agent sends to its model
 * provider. A real daemon, a real MCP client over HTTP: the linked file is never read, and every
 * surface names the link and the fix.
 */

const started = trackStarted();

afterEach(started.cleanUp);

const CONTEXT = 'pulse://context/latest';
const REFUSED = 'is a symlink, and pulse never reads through symlinks: replace it with a regular file';

const contextOf = async (client: Awaited<ReturnType<typeof connectClient>>) => {
  const read = await client.readResource({ uri: CONTEXT });
  return (read.contents[0] as { text: string }).text;
};

/** Everything the daemon shows about itself: /status, /healthz, `pulse status`, its output and pulse.log. */
const surfaces = async (url: string, project: string, output: string) => {
  const status = await (await fetch(new URL('/status', url))).text();
  const health = await fetch(new URL('/healthz', url));
  const cli = await runCli(['status', '-p', project]);
  const log = await readFile(join(project, '.pulse', 'pulse.log'), 'utf8').catch(() => '');
  return { status, health: { code: health.status, text: await health.text() }, cli: cli.stdout, output, log };
};

describe('reads stay in the project', () => {
  it('never puts the target of a symlinked task.md into the context an MCP client reads, and names the link everywhere', async () => {
    const project = await tempProject('pulse-reads-');
    const home = await tempProject('pulse-reads-home-');
    started.projects.push(project, home);
    const secret = join(home, 'id_rsa');
    await writeFile(secret, `-----BEGIN OPENSSH PRIVATE KEY-----\n${PLANTED_SECRET}\n`);
    await runCli(['init', '-p', project]);
    const pulseDir = join(project, '.pulse');
    for (const name of ['task.md', 'plan.md']) {
      await rm(join(pulseDir, name));
      await symlink(secret, join(pulseDir, name));
    }

    const daemon = await startDaemon(project);
    started.daemons.push(daemon);
    const client = await connectClient(daemon.url);
    started.clients.push(client);

    const context = await contextOf(client);
    expect(context).not.toContain(PLANTED_SECRET);
    expect(context).toContain(
      `## Task\n[pulse: cannot read .pulse/task.md now: it ${REFUSED}. pulse has read no version of it, so none is shown.]`,
    );
    expect(context).toContain(`[pulse: cannot read .pulse/plan.md now: it ${REFUSED}.`);
    // A task or plan that cannot be read is a problem to fix, not a change to the guidance: no hold.
    const answer = await callTool<{ needs_replan: boolean; unobservable: unknown[] }>(
      client,
      'pulse_should_interrupt',
    );
    expect(answer.needs_replan).toBe(false);
    expect(answer.unobservable).toEqual([
      { file: '.pulse/task.md', reason: REFUSED },
      { file: '.pulse/plan.md', reason: REFUSED },
    ]);
    let seen = await surfaces(daemon.url, project, daemon.output());
    expect(seen.health.code).toBe(503);
    expect(seen.health.text).toContain(`.pulse/task.md ${REFUSED}`);
    expect(seen.cli).toContain(`problem:   .pulse/task.md ${REFUSED}`);
    expect(JSON.stringify(seen)).not.toContain(PLANTED_SECRET);

    // The user makes task.md a file: it is read. Then guidance.md is swapped for a link while pulse runs.
    await rm(join(pulseDir, 'task.md'));
    await writeFile(join(pulseDir, 'task.md'), '# Task\n\nThe real task.\n');
    await waitUntil(async () => (await contextOf(client)).includes('The real task.'));
    const guidance = await readFile(join(pulseDir, 'guidance.md'), 'utf8');
    await symlink(secret, join(project, 'guidance-link'));
    await rename(join(project, 'guidance-link'), join(pulseDir, 'guidance.md'));
    const held = await waitUntil(async () => {
      const now = await callTool<{ needs_replan: boolean; reason: string }>(client, 'pulse_should_interrupt');
      return now.needs_replan && now;
    });
    expect(held.reason).toContain(
      `pulse cannot see or record changes to the guidance or constraints: .pulse/guidance.md ${REFUSED}.`,
    );
    const after = await contextOf(client);
    expect(after).not.toContain(PLANTED_SECRET);
    // The last guidance pulse read stays, marked: the link's target never replaces it.
    expect(after).toContain(
      `${guidance.trim()}\n\n[pulse: cannot read .pulse/guidance.md now: it ${REFUSED}. Above is the last version pulse read.]`,
    );
    seen = await surfaces(daemon.url, project, daemon.output());
    expect(seen.cli).toContain(`problem:   .pulse/guidance.md ${REFUSED}`);
    expect(JSON.stringify(seen)).not.toContain(PLANTED_SECRET);
  });

  it('pulse status without a daemon names a symlinked guidance.md and events.jsonl, reads neither, and says the plan is on hold', async () => {
    const project = await tempProject('pulse-reads-offline-');
    const home = await tempProject('pulse-reads-home-');
    started.projects.push(project, home);
    const secret = join(home, 'events.jsonl');
    // Shaped as events, so a read through the link would count them.
    await writeFile(
      secret,
      `${JSON.stringify({ id: 'evt_20260101T000000000000Z_00000000', timestamp: '2026-01-01T00:00:00Z', kind: 'modified', path: `.pulse/${PLANTED_SECRET}.md`, sha256: null, size: null })}\n`,
    );
    await runCli(['init', '-p', project]);
    const pulseDir = join(project, '.pulse');
    for (const name of ['guidance.md', 'events.jsonl']) {
      await rm(join(pulseDir, name));
      await symlink(secret, join(pulseDir, name));
    }
    const text = await runCli(['status', '-p', project]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('replan:    ON HOLD');
    expect(text.stdout).toContain(`problem:   .pulse/guidance.md ${REFUSED}`);
    expect(text.stdout).toContain(`problem:   .pulse/events.jsonl ${REFUSED}`);
    expect(text.stdout).toContain('events:    0');
    const json = await runCli(['status', '-p', project, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ needs_replan: true, events: 0 });
    expect(text.stdout + text.stderr + json.stdout).not.toContain(PLANTED_SECRET);
  });
});
