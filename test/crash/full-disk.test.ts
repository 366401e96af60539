import { spawnSync } from 'node:child_process';
import { appendFile, cp, mkdir, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  oneShot,
  type RunningDaemon,
  readEvents,
  removeProject,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import type { AckAnswer, Decision } from '../support/protocol.js';

/*
 * A real full disk: `.pulse/` on a 1 MiB tmpfs, mounted in a user and mount namespace
 * of the daemon's own (`unshare -rm`, no root needed), so the test sees it through
 * /proc/<pid>/root. One change must be one line however often it is looked at, a pending replan
 * and an accepted ack stay true, each answer says what is durable, and all of it reaches the disk
 * once space returns, without a restart. Skipped where unprivileged namespaces are off.
 */

const mountable = (() => {
  const dir = join(process.env.TMPDIR ?? '/tmp', `pulse-unshare-probe-${process.pid}`);
  spawnSync('mkdir', ['-p', dir]);
  const probe = spawnSync('unshare', ['-rm', 'sh', '-c', `mount -t tmpfs -o size=1m tmpfs '${dir}'`]);
  spawnSync('rmdir', [dir]);
  return probe.status === 0;
})();

const daemons: RunningDaemon[] = [];
const projects: string[] = [];

afterEach(async () => {
  await Promise.all(daemons.splice(0).map((daemon) => daemon.kill9()));
  await Promise.all(projects.splice(0).map(removeProject));
});

/** A daemon whose `.pulse/` is a fresh 1 MiB tmpfs, and that folder as the test reaches it. */
const startOnTinyDisk = async () => {
  const project = await tempProject('pulse-full-disk-');
  projects.push(project);
  await mkdir(join(project, '.pulse'));
  const mount = `mount -t tmpfs -o size=1m tmpfs '${join(project, '.pulse')}' && exec "$@"`;
  const daemon = await startDaemon(project, { prefix: ['unshare', '-rm', 'sh', '-c', mount, 'sh'] });
  daemons.push(daemon);
  const dir = join('/proc', String(daemon.process.pid), 'root', project, '.pulse');
  return { daemon, project, file: (name: string) => join(dir, name) };
};

const call = async <T>(daemon: RunningDaemon, name: string, args: Record<string, unknown> = {}) => {
  const { body } = await oneShot(daemon.url, 'tools/call', { name, arguments: args });
  expect(body.result?.isError, JSON.stringify(body)).toBeFalsy();
  return body.result!.structuredContent as T;
};
const interrupt = (daemon: RunningDaemon) => call<Decision>(daemon, 'pulse_should_interrupt');

/** Fills the disk to the last page: further writes that need a new page fail with ENOSPC. */
const fill = async (path: string) => {
  const page = Buffer.alloc(4096, 0x2e);
  try {
    for (;;) await appendFile(path, page);
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
  }
};

/**
 * Rewrites a file on the full disk in place, padded with spaces to its old length: writing over
 * its own page frees nothing. A truncating write would free that page for a moment, and a scan of
 * the emptied file on a loaded machine may take it for the event it logs, leaving none for the write.
 */
const rewrite = async (path: string, text: string) => {
  const { size } = await stat(path);
  const handle = await open(path, 'r+');
  try {
    await handle.write(Buffer.from(text.padEnd(size, ' ')), 0, undefined, 0);
  } finally {
    await handle.close();
  }
};

/** Bytes an append to `events.jsonl` can still use without a new page (tmpfs hands out 4 KiB pages). */
const slack = async (path: string) => {
  const { size } = await stat(path);
  return size % 4096 === 0 ? 0 : 4096 - (size % 4096);
};

const held = async (daemon: RunningDaemon, project: string) => {
  const response = await fetch(new URL('/hook/claude/PreToolUse', daemon.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      session_id: 'full-disk',
      cwd: project,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf src' },
    }),
  });
  const answer = (await response.json()) as { hookSpecificOutput?: { permissionDecision: string } };
  return answer.hookSpecificOutput?.permissionDecision === 'deny';
};

const healthStatus = async (daemon: RunningDaemon) => (await fetch(new URL('/healthz', daemon.url))).status;

describe.skipIf(!mountable)('a full disk under .pulse/ (a real 1 MiB tmpfs)', () => {
  it('logs a guidance change once, keeps it pending and an ack accepted in memory, says neither is durable, and writes both once space returns', async () => {
    const { daemon, project, file } = await startOnTinyDisk();
    // Room in events.jsonl's last page for the next event, so the append lands and the state write fails.
    await writeFile(file('task.md'), '# Task\n\nOn a tiny disk.\n');
    await interrupt(daemon);
    for (let n = 0; (await slack(file('events.jsonl'))) < 600; n++) {
      await writeFile(file('task.md'), `# Task\n\nEdit ${n}.\n`);
      await interrupt(daemon);
    }
    await fill(file('fill'));

    await rewrite(file('guidance.md'), '# Guidance\n\nChanged on a full disk.\n');
    const first = await interrupt(daemon);
    expect(first.needs_replan).toBe(true);
    expect(first.pending_replan_event_id).not.toBeNull();
    expect(first.unobservable).toEqual([
      { file: '.pulse/state.json', reason: expect.stringMatching(/^cannot be written \(ENOSPC/) },
    ]);
    for (let again = 0; again < 8; again++) {
      expect((await interrupt(daemon)).pending_replan_event_id).toBe(first.pending_replan_event_id);
    }
    expect(await held(daemon, project)).toBe(true);
    expect(await healthStatus(daemon)).toBe(503);
    const guidanceLines = async () =>
      (await readEvents(join('/proc', String(daemon.process.pid), 'root', project))).filter(
        (e) => e.path === '.pulse/guidance.md',
      );
    expect(await guidanceLines(), 'one change, one line, however often it is looked at').toHaveLength(1);

    const ack = await call<AckAnswer>(daemon, 'pulse_ack_replan', {
      event_id: first.pending_replan_event_id,
    });
    expect(ack).toMatchObject({
      accepted: true,
      durable: false,
      acknowledged_event_id: first.pending_replan_event_id,
    });
    expect(ack.warning).toMatch(/not yet written to \.pulse\/state\.json \(ENOSPC.*do not ack again/);
    const after = await interrupt(daemon);
    expect(after).toMatchObject({
      needs_replan: false,
      last_acknowledged_event_id: first.pending_replan_event_id,
    });
    expect(after.unobservable.map((f) => f.file)).toEqual(['.pulse/state.json']);
    expect(JSON.parse(await readFile(file('state.json'), 'utf8')).last_acknowledged_event_id).not.toBe(
      first.pending_replan_event_id,
    );

    // Space returns: the ack and the hashes are written by themselves, no call and no restart needed.
    await rm(file('fill'));
    await waitUntil(
      async () =>
        JSON.parse(await readFile(file('state.json'), 'utf8')).last_acknowledged_event_id ===
        first.pending_replan_event_id,
      { describe: () => 'the ack in state.json once space returned' },
    );
    await waitUntil(async () => (await healthStatus(daemon)) === 200, { describe: () => '/healthz 200' });
    expect((await interrupt(daemon)).unobservable).toEqual([]);
    expect(await guidanceLines(), 'still one line after recovery').toHaveLength(1);

    // What a restart would find: the ack stands, nothing pending again.
    const copy = await tempProject('pulse-full-disk-copy-');
    projects.push(copy);
    await cp(join('/proc', String(daemon.process.pid), 'root', project, '.pulse'), join(copy, '.pulse'), {
      recursive: true,
      filter: (source) => !/daemon\.(json|lock)$/.test(source),
    });
    const restarted = await startDaemon(copy);
    daemons.push(restarted);
    expect(await interrupt(restarted)).toMatchObject({
      needs_replan: false,
      last_acknowledged_event_id: first.pending_replan_event_id,
      unobservable: [],
    });
  });

  it('fails closed while a change cannot be appended, and logs it once when space returns', async () => {
    const { daemon, project, file } = await startOnTinyDisk();
    await fill(file('fill'));
    // Use up events.jsonl's last page, edit by edit, until an append fails.
    let refused: Decision | undefined;
    for (let n = 0; n < 40 && refused === undefined; n++) {
      await rewrite(file('task.md'), `# Task\n\nEdit ${n}.\n`);
      const answer = await interrupt(daemon);
      if (answer.unobservable.some((f) => f.file === '.pulse/events.jsonl')) refused = answer;
    }
    expect(refused, 'an append refused for want of space').toBeDefined();
    const lines = (await readFile(file('events.jsonl'), 'utf8')).split('\n').filter(Boolean);
    expect(
      () => lines.map((line) => JSON.parse(line)),
      'no torn line left by the failed append',
    ).not.toThrow();

    await rewrite(file('guidance.md'), '# Guidance\n\nChanged while nothing can be logged.\n');
    for (let again = 0; again < 5; again++) {
      const answer = await interrupt(daemon);
      expect(answer.needs_replan, 'fail closed: the change cannot be logged').toBe(true);
      expect(answer.pending_replan_event_id).toBeNull();
      expect(answer.reason).toMatch(/\.pulse\/events\.jsonl cannot be appended to \(ENOSPC/);
    }
    expect(await held(daemon, project)).toBe(true);
    expect((await readFile(file('events.jsonl'), 'utf8')).split('\n').filter(Boolean)).toEqual(lines);

    await rm(file('fill'));
    const recovered = await waitUntil(
      async () => {
        const answer = await interrupt(daemon);
        return answer.pending_replan_event_id !== null && answer;
      },
      { describe: () => 'the guidance change logged once space returned' },
    );
    const events = (await readFile(file('events.jsonl'), 'utf8')).split('\n').filter(Boolean);
    const guidance = events.map((line) => JSON.parse(line)).filter((e) => e.path === '.pulse/guidance.md');
    expect(guidance.map((e) => e.id)).toEqual([recovered.pending_replan_event_id]);
    expect(recovered.unobservable).toEqual([]);
  });
});
