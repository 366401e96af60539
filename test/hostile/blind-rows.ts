import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, rename, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type RunningDaemon, readEvents, runCli, startDaemon, waitUntil } from '../support/daemon.js';
import { daemonRecord } from '../support/daemon-record.js';
import { type Decision, REASONS } from '../support/protocol.js';
import { callOneShot, contextText, decision, edit, figures, type HostileCase, status } from './harness.js';

// A guidance or constraints change is either enforced (logged once, replan pending,
// hook holds) or pulse says loudly that it cannot see or record it: in the tool answer, the
// context, `pulse status`, /healthz (503 with the reason) and the hook (which holds). Each row
// breaks one thing, checks every one of those, repairs it and checks that pulse recovers by itself.

const pulse = (d: RunningDaemon, name = '') => join(d.project, '.pulse', name);

interface Health {
  ok: boolean;
  problems: string[];
}

export const health = async (d: RunningDaemon) => {
  const response = await fetch(new URL('/healthz', d.url));
  return { status: response.status, body: (await response.json()) as Health };
};

/** What a Claude Code PreToolUse hook gets for a Bash command (or a Read), as the hook route answers it. */
export const preToolUse = async (d: RunningDaemon, tool: { Bash: string } | { Read: string }) => {
  const [tool_name, tool_input] =
    'Bash' in tool ? ['Bash', { command: tool.Bash }] : ['Read', { file_path: tool.Read }];
  const response = await fetch(new URL('/hook/claude/PreToolUse', d.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      session_id: 'hostile',
      cwd: d.project,
      hook_event_name: 'PreToolUse',
      tool_name,
      tool_input,
    }),
  });
  const answer = (await response.json()) as {
    hookSpecificOutput?: { permissionDecision: string; permissionDecisionReason: string };
  };
  return answer.hookSpecificOutput?.permissionDecision === 'deny'
    ? answer.hookSpecificOutput.permissionDecisionReason
    : null;
};

/** `pulse status -p <project>` as a user runs it. */
export const pulseStatus = async (d: RunningDaemon) => (await runCli(['status', '-p', d.project])).stdout;

/** Waits until `/status` lists a fault for `file` whose reason matches, and returns the reason. */
export const faultOf = (d: RunningDaemon, file: string, reason: RegExp) =>
  waitUntil(
    async () => {
      const found = (await status(d)).log.unobservable.find((fault) => fault.file === file)?.reason;
      return found !== undefined && reason.test(found) && found;
    },
    { describe: () => `a fault reported for ${file} matching ${reason}` },
  );

/**
 * Puts what `make` creates at a temp path in the project in place of `.pulse/<name>`, in one
 * rename: no scan can catch the file missing in between (and log it deleted).
 */
export const swapIn = async (
  d: RunningDaemon,
  name: string,
  make: (path: string) => Promise<void> | void,
) => {
  const temp = join(d.project, `.swap-${name}`);
  await make(temp);
  await rename(temp, pulse(d, name));
};

/**
 * Every place the issue promises to say it, for a fault of `file` whose reason matches `reason`:
 * the tool answer (fail closed when it hides guidance), `/status`, `pulse status`, `/healthz` 503,
 * and, for a fault that hides guidance, the hook holding a write and letting a read run.
 */
export const saysLoudly = async (
  d: RunningDaemon,
  file: string,
  reason: RegExp,
  { hidesGuidance = true } = {},
) => {
  await faultOf(d, file, reason);
  const answer = await callInterrupt(d);
  expect(answer.unobservable).toContainEqual({ file, reason: expect.stringMatching(reason) });
  if (hidesGuidance) {
    expect(answer.needs_replan).toBe(true);
    expect(answer.reason).toMatch(/^pulse cannot see or record changes to the guidance or constraints: /);
    expect(answer.reason).toContain(file);
  }
  expect(await pulseStatus(d)).toMatch(
    new RegExp(`problem: +${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} `),
  );
  const { status: code, body } = await health(d);
  expect(code, JSON.stringify(body)).toBe(503);
  expect(body.ok).toBe(false);
  expect(body.problems.join('\n')).toContain(file);
  if (hidesGuidance) {
    const held = await preToolUse(d, { Bash: 'rm -rf src' });
    expect(held).toMatch(/pulse cannot see or record changes to the guidance or constraints/);
    expect(held).toContain(file);
    expect(await preToolUse(d, { Read: join(d.project, 'README.md') }), 'reading still runs').toBeNull();
  }
};

/** `pulse_should_interrupt`'s whole answer, the fields the issue adds included. */
export const callInterrupt = async (d: RunningDaemon) =>
  (await callOneShot(d, 'pulse_should_interrupt')).result!.structuredContent as unknown as Decision;

/** Waits until `/healthz` answers 200 again (pulse rechecks by itself every second). */
export const recovered = (d: RunningDaemon) =>
  waitUntil(async () => (await health(d)).status === 200, { describe: () => '/healthz 200 again' });

/** The events logged after `before` for `path`. */
const loggedSince = async (d: RunningDaemon, before: number, path: string) =>
  (await readEvents(d.project)).slice(before).filter((event) => event.path === path);

/** The daemon's resident memory, in MiB, from /proc. */
const rssMiB = async (d: RunningDaemon) => {
  const text = await readFile(`/proc/${d.process.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(text)![1]) / 1024;
};

/** How pulse refuses a `.pulse/` file that is a symlink, wherever it points (a loop, /proc, ~/.ssh). */
export const SYMLINK_REFUSED =
  /^is a symlink, and pulse never reads through symlinks: replace it with a regular file$/;

export const blindRows: HostileCase[] = [
  {
    name: 'task.md as a symlink loop: reported for task.md alone; a guidance edit meanwhile is logged once, pending, held by the hook',
    bug: 'every reconcile threw ELOOP: no edit of any file was logged, a guidance edit got needs_replan=false, the hook allowed rm -rf src and /healthz answered 200',
    leaves: { newerPending: true },
    run: async (d) => {
      const before = (await readEvents(d.project)).length;
      await swapIn(d, 'task.md', (path) => symlink('task.md', path));
      await edit(d, 'guidance.md', '# Guidance\n\nWhile task.md is a loop.\n');
      const now = await decision(d);
      expect(now.needs_replan).toBe(true);
      const logged = await loggedSince(d, before, '.pulse/guidance.md');
      expect(logged).toHaveLength(1);
      expect(now.pending_replan_event_id).toBe(logged[0]!.id);
      await saysLoudly(d, '.pulse/task.md', SYMLINK_REFUSED, { hidesGuidance: false });
      expect(await preToolUse(d, { Bash: 'rm -rf src' }), 'the pending replan holds').toMatch(
        /a replan is pending/,
      );
      expect(await pulseStatus(d)).toMatch(/replan: +PENDING/);
      await edit(d, 'task.md', '# Task\n\nA file again.\n');
      await decision(d);
      expect(await loggedSince(d, before, '.pulse/task.md'), 'the new text, once').toHaveLength(1);
      await recovered(d);
    },
  },
  {
    name: 'a symlink loop in place of task.md at start: the daemon starts, reports it, and logs a guidance edit',
    bug: 'the same, from the start',
    leaves: { newerPending: true },
    run: async (d) => {
      expect(await d.stop()).toBe(0);
      await rm(pulse(d, 'task.md'));
      await symlink('task.md', pulse(d, 'task.md'));
      const next = await startDaemon(d.project);
      await faultOf(next, '.pulse/task.md', SYMLINK_REFUSED);
      await edit(next, 'guidance.md', '# Guidance\n\nAfter a start with task.md a loop.\n');
      expect((await decision(next)).needs_replan).toBe(true);
      expect(await preToolUse(next, { Bash: 'rm -rf src' })).toMatch(/a replan is pending/);
      await edit(next, 'task.md', '# Task\n\nA file again.\n');
      await decision(next);
      await recovered(next);
      return next;
    },
  },
  {
    name: 'guidance.md as a symlink loop fails closed: every surface names the file and the fix; repaired, the change made meanwhile is logged once',
    leaves: { newerPending: true },
    run: async (d) => {
      const planted = (await decision(d)).pending_replan_event_id;
      await swapIn(d, 'guidance.md', (path) => symlink('guidance.md', path));
      await saysLoudly(d, '.pulse/guidance.md', SYMLINK_REFUSED);
      const answer = await callInterrupt(d);
      expect(answer.pending_replan_event_id, 'the planted replan is still the one pending').toBe(planted);
      expect(answer.reason.endsWith(REASONS.pending)).toBe(true);
      const context = await contextText(d);
      expect(context).toMatch(/^- needs_replan: true$/m);
      expect(context).toMatch(/^- unobservable: \.pulse\/guidance\.md is a symlink, and pulse never reads/m);
      expect(context).toContain(
        '[pulse: cannot read .pulse/guidance.md now: it is a symlink, and pulse never reads',
      );
      const before = (await readEvents(d.project)).length;
      // The user fixes it and changes the guidance at once: logged once, as the newest replan.
      await edit(d, 'guidance.md', '# Guidance\n\nWritten over the loop.\n');
      const now = await decision(d);
      const logged = await loggedSince(d, before, '.pulse/guidance.md');
      expect(logged).toHaveLength(1);
      expect(now.pending_replan_event_id).toBe(logged[0]!.id);
      await recovered(d);
    },
  },
  {
    name: 'constraints.md, sources.json and focus.json as symlinks to /proc/self/pagemap (size 0, endless): refused as symlinks, never opened, memory stays bounded',
    bug: 'read whole: RSS 1.5 GB in 4 s, 7 GB at 70 s, calls hung (then refused at their limits; since issue 32, as symlinks)',
    run: async (d) => {
      const constraints = await readFile(pulse(d, 'constraints.md'), 'utf8');
      for (const name of ['constraints.md', 'sources.json', 'focus.json']) {
        await swapIn(d, name, (path) => symlink('/proc/self/pagemap', path));
      }
      await saysLoudly(d, '.pulse/constraints.md', SYMLINK_REFUSED);
      const sources = await waitUntil(async () => (await status(d)).sources.error ?? undefined);
      expect(sources).toMatch(/sources\.json .*is a symlink, and pulse never reads through symlinks/);
      const focus = await waitUntil(async () => (await status(d)).focus.last_error ?? undefined);
      expect(focus).toMatch(/focus\.json is a symlink, and pulse never reads through symlinks/);
      // Each call scans again while a file is refused: the file is still never read into memory.
      for (let call = 0; call < 5; call++) await decision(d);
      figures.procRssMiB = Math.round(await rssMiB(d));
      expect(figures.procRssMiB, 'resident memory, MiB').toBeLessThan(400);
      for (const name of ['sources.json', 'focus.json']) await rm(pulse(d, name));
      await edit(d, 'constraints.md', constraints);
      await decision(d);
      await recovered(d);
    },
  },
  {
    name: 'a 20 GiB sparse guidance.md is refused by its size, never hashed: a call answers, and a task.md edit made meanwhile is logged',
    bug: 'hashed inside the reconcile every call waits for: no answer within 10 s, edits made meanwhile not logged',
    run: async (d) => {
      const guidance = await readFile(pulse(d, 'guidance.md'), 'utf8');
      const before = (await readEvents(d.project)).length;
      await swapIn(d, 'guidance.md', async (path) => {
        await writeFile(path, '');
        await truncate(path, 20 * 1024 ** 3);
      });
      await edit(d, 'task.md', '# Task\n\nEdited beside a 20 GiB guidance.md.\n');
      const started = performance.now();
      const now = await decision(d);
      figures.hugeFileCallMs = Math.round(performance.now() - started);
      expect(now.needs_replan).toBe(true);
      expect(await loggedSince(d, before, '.pulse/task.md')).toHaveLength(1);
      await saysLoudly(d, '.pulse/guidance.md', /^is 21474836480 bytes, more than the limit of 16777216/);
      await edit(d, 'guidance.md', guidance);
      await decision(d);
      expect(await loggedSince(d, before, '.pulse/guidance.md'), 'the same text back: no change').toEqual([]);
      await recovered(d);
    },
  },
  {
    name: 'guidance.md as a FIFO is refused without waiting for a writer, and fails closed until it is a file again',
    run: async (d) => {
      const guidance = await readFile(pulse(d, 'guidance.md'), 'utf8');
      await swapIn(d, 'guidance.md', (path) => {
        execFileSync('mkfifo', [path]);
      });
      await saysLoudly(d, '.pulse/guidance.md', /^is a FIFO \(named pipe\), not a regular file/);
      await edit(d, 'guidance.md', guidance);
      await decision(d);
      await recovered(d);
    },
  },
  {
    name: '.pulse/ swapped for a symlink while running: nothing is written into the target, the hook holds, /healthz 503; a real folder again, it recovers',
    bug: 'events.jsonl was written into the link target and a state.json there replaced',
    run: async (d) => {
      const target = `${d.project}-elsewhere`;
      await mkdir(target);
      for (const name of ['task.md', 'guidance.md', 'constraints.md', 'plan.md']) {
        await writeFile(join(target, name), await readFile(pulse(d, name)));
      }
      await writeFile(join(target, 'state.json'), '{"not":"pulse state"}\n');
      await rename(pulse(d), join(d.project, '.pulse-real'));
      await symlink(target, pulse(d));
      await writeFile(join(target, 'guidance.md'), '# Guidance\n\nIn the link target.\n');
      await saysLoudly(
        d,
        '.pulse/',
        /^is a symlink to .*-elsewhere: pulse never follows \.pulse\/ through a symlink/,
      );
      expect(await contextText(d), 'nothing is read through it either').not.toContain('In the link target.');
      expect((await readdir(target)).sort()).toEqual([
        'constraints.md',
        'guidance.md',
        'plan.md',
        'state.json',
        'task.md',
      ]);
      expect(await readFile(join(target, 'state.json'), 'utf8')).toBe('{"not":"pulse state"}\n');
      await rm(pulse(d));
      await rename(join(d.project, '.pulse-real'), pulse(d));
      await rm(target, { recursive: true });
      await decision(d);
      await recovered(d);
    },
  },
  {
    name: '.pulse/ as a symlink at start is refused with a clear error, and nothing is written through it',
    run: async (d) => {
      expect(await d.stop()).toBe(0);
      const target = `${d.project}-elsewhere`;
      await rename(pulse(d), target);
      await symlink(target, pulse(d));
      const before = (await readdir(target)).sort();
      const { code, stderr } = await runCli(['start', '--project', d.project, '--port', '0']);
      expect(code).toBe(1);
      expect(stderr).toMatch(/\.pulse is a symlink; pulse never follows \.pulse\/ through a symlink/);
      expect((await readdir(target)).sort()).toEqual(before);
      await rm(pulse(d));
      await rename(target, pulse(d));
      return startDaemon(d.project);
    },
  },
  {
    name: 'a second pulse start on the project is refused, naming the running daemon and its endpoint; --port cannot get round it',
    bug: 'with 8765 taken the error suggested --port 8766, which started a second daemon on the same .pulse/: each change logged twice, acks answered apart, the discovery file overwritten and then deleted',
    run: async (d) => {
      const discovery = daemonRecord(d.project);
      for (const port of ['0', String(d.port)]) {
        const { code, stderr } = await runCli(['start', '--project', d.project, '--port', port]);
        expect(code).toBe(1);
        expect(stderr).toContain(`pulse is already running for this project (pid ${d.process.pid}`);
        expect(stderr).toContain(`at ${d.url}`);
      }
      expect(daemonRecord(d.project)).toEqual(discovery);
      expect(JSON.parse(await readFile(pulse(d, 'daemon.lock'), 'utf8')).pid).toBe(d.process.pid);
      // Another project on this daemon's port joins it: one daemon serves both.
      const other = `${d.project}-other`;
      await mkdir(other);
      const added = await runCli(['start', '--project', other, '--port', String(d.port)]);
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toContain(`(pid ${d.process.pid})`);
      expect((await runCli(['stop', '--project', other])).code).toBe(0);
      expect(d.process.exitCode).toBeNull();
      await rm(other, { recursive: true });
    },
  },
  {
    name: 'the lock is released on SIGTERM and on SIGINT, so the next start takes it at once',
    run: async (d) => {
      expect(JSON.parse(await readFile(pulse(d, 'daemon.lock'), 'utf8')).pid).toBe(d.process.pid);
      expect(await d.stop('SIGTERM')).toBe(0);
      await expect(readFile(pulse(d, 'daemon.lock'))).rejects.toThrow(/ENOENT/);
      const second = await startDaemon(d.project);
      expect(JSON.parse(await readFile(pulse(d, 'daemon.lock'), 'utf8')).pid).toBe(second.process.pid);
      expect(await second.stop('SIGINT')).toBe(0);
      await expect(readFile(pulse(d, 'daemon.lock'))).rejects.toThrow(/ENOENT/);
      return startDaemon(d.project);
    },
  },
];
