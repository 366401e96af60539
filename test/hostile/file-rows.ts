import { appendFile, lstat, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type RunningDaemon, readEvents, startDaemon, waitUntil } from '../support/daemon.js';
import { recordedDaemon } from '../support/daemon-record.js';
import { saveSources } from '../support/trust.js';
import { contextText, decision, edit, type HostileCase, status } from './harness.js';

// Rows that damage `.pulse/`: each gets a fresh daemon with its own planted history.

const pulse = (d: RunningDaemon, name = '') => join(d.project, '.pulse', name);

const restart = async (d: RunningDaemon) => {
  expect(await d.stop()).toBe(0);
  return startDaemon(d.project);
};

/** A file outside the project, next to it in the temp dir, that pulse must never write. */
const outsideFile = async (d: RunningDaemon, text: string) => {
  const path = `${d.project}-outside.txt`;
  await writeFile(path, text);
  return { path, stat: await stat(path) };
};

const unchanged = async (outside: { path: string; stat: import('node:fs').Stats }, text: string) => {
  expect(await readFile(outside.path, 'utf8')).toBe(text);
  expect((await stat(outside.path)).mtimeMs).toBe(outside.stat.mtimeMs);
  await rm(outside.path);
};

/** Waits until /status says events.jsonl cannot be appended to, and returns why. */
const eventsFault = (d: RunningDaemon) =>
  waitUntil(
    async () => (await status(d)).log.unobservable.find((f) => f.file === '.pulse/events.jsonl')?.reason,
    { describe: () => 'events.jsonl reported as not appendable' },
  );

const sourcesError = (d: RunningDaemon, describe: string) =>
  waitUntil(async () => (await status(d)).sources.error ?? undefined, { describe: () => describe });

export const fileRows: HostileCase[] = [
  {
    name: 'a 10 MB guidance.md: the context inlines 64 KiB, says the rest is not sent, and a call stays fast',
    leaves: { newerPending: true },
    run: async (d) => {
      await writeFile(pulse(d, 'guidance.md'), `# Guidance\n${'y'.repeat(10 * 1024 * 1024)}`);
      expect((await decision(d)).needs_replan).toBe(true);
      const started = Date.now();
      await decision(d);
      expect(Date.now() - started, 'a call once the big file is hashed').toBeLessThan(1000);
      const text = await contextText(d);
      expect(text).toMatch(
        /\[pulse: cut here; \.pulse\/guidance\.md is 10485771 bytes\. Read the file for the rest\.\]/,
      );
      expect(text.length).toBeLessThan(100 * 1024);
    },
  },
  {
    name: 'a binary guidance.md (NUL bytes, invalid UTF-8) is logged and rendered with replacement characters',
    leaves: { newerPending: true },
    run: async (d) => {
      await writeFile(
        pulse(d, 'guidance.md'),
        Buffer.from([0x00, 0xff, 0xfe, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x00]),
      );
      const now = await decision(d);
      expect(now.needs_replan).toBe(true);
      expect(await contextText(d)).toContain('\ufffd');
    },
  },
  {
    name: 'a Latin-1 task.md is logged; the context shows U+FFFD for the byte it cannot decode',
    run: async (d) => {
      await writeFile(pulse(d, 'task.md'), Buffer.from('# Task\n\ncaf\xe9 cr\xe8me\n', 'latin1'));
      const text = await contextText(d);
      expect(text).toContain('caf\ufffd cr\ufffdme');
      expect(text).toMatch(/modified \.pulse\/task\.md/);
    },
  },
  {
    name: 'guidance.md replaced by a folder fails closed until it is a file again; then the change is logged once',
    leaves: { newerPending: true },
    run: async (d) => {
      const before = (await readEvents(d.project)).length;
      await rm(pulse(d, 'guidance.md'));
      await mkdir(pulse(d, 'guidance.md'));
      const fault = await waitUntil(
        async () =>
          (await status(d)).log.unobservable.find(
            (f) => f.file === '.pulse/guidance.md' && /folder/.test(f.reason),
          ),
        { describe: () => 'guidance.md reported as a folder' },
      );
      expect(fault.reason).toBe('is a folder, not a regular file: replace it with a regular file');
      const held = await decision(d);
      expect(held.needs_replan).toBe(true);
      // A scan may catch the file gone before the folder is there: then it was logged deleted, once.
      const between = (await readEvents(d.project)).slice(before);
      expect(between.every((e) => e.kind === 'deleted' && e.path === '.pulse/guidance.md')).toBe(true);
      expect(between.length).toBeLessThanOrEqual(1);
      await rm(pulse(d, 'guidance.md'), { recursive: true });
      await writeFile(pulse(d, 'guidance.md'), '# Guidance\n\nA file again.\n');
      const now = await decision(d);
      const guidance = (await readEvents(d.project)).slice(before + between.length);
      expect(guidance.map((e) => [e.path, e.kind])).toEqual([
        ['.pulse/guidance.md', between.length ? 'created' : 'modified'],
      ]);
      expect(now.pending_replan_event_id).toBe(guidance[0]!.id);
    },
  },
  {
    name: 'plan.md as a symlink to a file outside: never read (the context names the link and the fix), never written',
    bug: 'read through: the target was inlined into the context, up to 64 KiB (issue 32)',
    run: async (d) => {
      const text = `# Outside plan\n${'z'.repeat(100 * 1024)}`;
      const outside = await outsideFile(d, text);
      const plan = await readFile(pulse(d, 'plan.md'), 'utf8');
      await rm(pulse(d, 'plan.md'));
      await symlink(outside.path, pulse(d, 'plan.md'));
      await decision(d);
      const context = await contextText(d);
      expect(context).not.toContain('# Outside plan');
      expect(context).toContain(
        '[pulse: cannot read .pulse/plan.md now: it is a symlink, and pulse never reads through symlinks: replace it with a regular file.',
      );
      await unchanged(outside, text);
      await edit(d, 'plan.md', plan);
      await decision(d);
    },
  },
  {
    name: 'state.json swapped for a symlink while running: the next write replaces the link, never the target',
    run: async (d) => {
      const text = '{"not":"pulse state"}\n';
      const outside = await outsideFile(d, text);
      await rm(pulse(d, 'state.json'));
      await symlink(outside.path, pulse(d, 'state.json'));
      await edit(d, 'task.md', '# Task\n\nA change that rewrites state.json.\n');
      await decision(d);
      expect((await lstat(pulse(d, 'state.json'))).isSymbolicLink()).toBe(false);
      await unchanged(outside, text);
    },
  },
  {
    name: 'events.jsonl swapped for a symlink while running: the append is refused (ELOOP), the target untouched, and pulse says it cannot log',
    bug: 'appendEvents opened events.jsonl with flag "a", following a symlink and writing outside .pulse/; it now opens with O_NOFOLLOW',
    run: async (d) => {
      const text = await readFile(pulse(d, 'events.jsonl'), 'utf8');
      const outside = await outsideFile(d, text);
      await rm(pulse(d, 'events.jsonl'));
      await symlink(outside.path, pulse(d, 'events.jsonl'));
      await edit(d, 'task.md', '# Task\n\nA change that would be appended.\n');
      expect((await decision(d)).needs_replan).toBe(true);
      // Awaited, not read once: a scan on the watcher's hint may report it a moment later.
      expect(await eventsFault(d)).toMatch(/^cannot be appended to \(ELOOP/);
      await unchanged(outside, text);
      // Put the log back as it was: the change is then logged once, and pulse is well again.
      await rm(pulse(d, 'events.jsonl'));
      await writeFile(pulse(d, 'events.jsonl'), text);
      await decision(d);
      expect((await readEvents(d.project)).filter((e) => e.path === '.pulse/task.md')).toHaveLength(1);
    },
  },
  {
    name: 'daemon.json planted as a symlink before start: the daemon neither writes nor follows it, the target untouched',
    bug: 'write-file-atomic followed symlinks: daemon.json went to the target; pulse now records its daemon in the user state folder only',
    run: async (d) => {
      expect(await d.stop()).toBe(0);
      const text = 'not for pulse\n';
      const outside = await outsideFile(d, text);
      await rm(pulse(d, 'daemon.json'), { force: true });
      await symlink(outside.path, pulse(d, 'daemon.json'));
      const next = await startDaemon(d.project);
      expect((await lstat(pulse(d, 'daemon.json'))).isSymbolicLink()).toBe(true);
      expect(recordedDaemon(d.project).port).toBe(next.port);
      await unchanged(outside, text);
      return next;
    },
  },
  {
    name: '.pulse/ deleted while running: calls answer from memory and fail closed, /healthz 503 names it; re-created, logging resumes and state.json gets the ack back',
    leaves: { newerPending: true, historyDeleted: true },
    run: async (d) => {
      await rm(pulse(d), { recursive: true, force: true });
      expect((await decision(d)).needs_replan).toBe(true);
      const response = await fetch(new URL('/healthz', d.url));
      const health = (await response.json()) as { ok: boolean; problems: string[] };
      expect(response.status, JSON.stringify(health)).toBe(503);
      expect(health.problems.join(' '), JSON.stringify(health)).toMatch(/\.pulse\/ is missing/);
      // The daemon's own log may have put .pulse/ back by now (pulse.log); either way is fine.
      await mkdir(pulse(d), { recursive: true });
      await writeFile(pulse(d, 'guidance.md'), '# Guidance\n\nWritten into the new folder.\n');
      const now = await decision(d);
      expect(now.pending_replan_event_id).not.toBeNull();
      const logged = await readFile(pulse(d, 'events.jsonl'), 'utf8');
      expect(logged).toMatch(/"kind":"deleted","path":".pulse\/task.md"/);
      expect(logged).toMatch(/"path":".pulse\/guidance.md"/);
    },
  },
  {
    name: 'a torn state.json at start is kept as .bak, the ack is salvaged and the pending replan stays pending',
    covered: 'test/store/state-file.test.ts (the salvage itself)',
    run: async (d) => {
      expect(await d.stop()).toBe(0);
      const whole = await readFile(pulse(d, 'state.json'), 'utf8');
      const torn = whole.slice(0, whole.indexOf('"last_acknowledged_plan_sha256"'));
      await writeFile(pulse(d, 'state.json'), torn);
      const next = await startDaemon(d.project);
      expect(await readFile(pulse(d, 'state.json.bak'), 'utf8')).toBe(torn);
      expect((await status(next)).log.warnings.join(' ')).toMatch(
        /state\.json was corrupt; kept it as state\.json\.bak/,
      );
      return next;
    },
  },
  {
    name: 'an agents record planted in state.json (a hook session that owes nothing) frees no hook: the change after the last ack holds it on restart',
    run: async (d) => {
      expect(await d.stop()).toBe(0);
      const state = JSON.parse(await readFile(pulse(d, 'state.json'), 'utf8'));
      const planted = {
        parties: ['hook:claude:planted'],
        owes_event_id: null,
        owes_files: [],
        acked_at: '2026-01-01T00:00:00.000000Z',
        tied_by: null,
      };
      await writeFile(pulse(d, 'state.json'), JSON.stringify({ ...state, agents: [planted] }));
      const next = await startDaemon(d.project);
      const response = await fetch(new URL('/hook/claude/PreToolUse', next.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          session_id: 'planted',
          cwd: d.project,
          hook_event_name: 'PreToolUse',
          tool_name: 'Bash',
          tool_input: { command: 'rm -rf src' },
        }),
      });
      const answer = (await response.json()) as { hookSpecificOutput?: { permissionDecision?: string } };
      expect(answer.hookSpecificOutput?.permissionDecision).toBe('deny');
      return next;
    },
  },
  {
    name: 'garbage written over state.json while running is replaced by the ack held in memory on the next write',
    run: async (d) => {
      await writeFile(pulse(d, 'state.json'), '\u0000garbage{');
      await edit(d, 'task.md', '# Task\n\nA change that rewrites state.json.\n');
      await decision(d);
    },
  },
  {
    name: 'a garbage line in the middle of events.jsonl is skipped on start with a warning; the events around it stay',
    covered: 'test/store/event-log-file.test.ts (the reader alone)',
    leaves: { plantedLines: 1 },
    run: async (d) => {
      expect(await d.stop()).toBe(0);
      const lines = (await readFile(pulse(d, 'events.jsonl'), 'utf8')).split('\n');
      lines.splice(1, 0, '\u0000{not an event');
      await writeFile(pulse(d, 'events.jsonl'), lines.join('\n'));
      const next = await startDaemon(d.project);
      expect((await status(next)).log.warnings).toContain(
        'events.jsonl has 1 line(s) that are not events; skipped them.',
      );
      return next;
    },
  },
  {
    name: 'a torn last line appended to events.jsonl while running does not swallow the next event',
    bug: 'the next append was glued onto the torn line, so that event (and its replan) vanished on the next start; appends now start on a new line',
    leaves: { plantedLines: 1, newerPending: true },
    run: async (d) => {
      await appendFile(pulse(d, 'events.jsonl'), '{"id":"evt_torn","kin');
      await edit(d, 'guidance.md', '# Guidance\n\nAfter the torn line.\n');
      const pending = (await decision(d)).pending_replan_event_id!;
      const next = await restart(d);
      expect(
        (await decision(next)).pending_replan_event_id,
        'the replan after the torn line, after a restart',
      ).toBe(pending);
      return next;
    },
  },
  {
    name: 'sources.json that is not JSON: the daemon runs on, /status names the file and the problem',
    run: async (d) => {
      await saveSources(d.project, '{"mcpServers": {');
      expect(await sourcesError(d, 'a sources error')).toMatch(/sources\.json/);
    },
  },
  {
    name: 'sources.json with wrong types: /status names the JSON path',
    run: async (d) => {
      await saveSources(
        d.project,
        JSON.stringify({
          mcpServers: { cal: { command: 5 } },
          sources: [{ name: 'cal', server: 'cal', tool: 't', interval_sec: 'soon' }],
        }),
      );
      const error = await sourcesError(d, 'a sources error');
      expect(error).toMatch(/mcpServers\.cal|interval_sec/);
    },
  },
  {
    name: 'a source naming a server that is not configured is dropped with a warning naming both',
    covered: 'test/e2e/sources.test.ts (the same, with pulse status)',
    run: async (d) => {
      await saveSources(
        d.project,
        JSON.stringify({ mcpServers: {}, sources: [{ name: 'ghost', server: 'nowhere', tool: 't' }] }),
      );
      const warnings = await waitUntil(async () => {
        const list = (await status(d)).sources.warnings;
        return list.length > 0 && list;
      });
      expect(warnings.join(' ')).toMatch(/source "ghost" names server "nowhere", which is not configured/);
    },
  },
  {
    name: 'events.jsonl replaced by a folder while running: the append fails with a clear error, calls still answer',
    run: async (d) => {
      const text = await readFile(pulse(d, 'events.jsonl'), 'utf8');
      await rm(pulse(d, 'events.jsonl'));
      await mkdir(pulse(d, 'events.jsonl'));
      await edit(d, 'task.md', '# Task\n\nA change that cannot be appended.\n');
      expect((await decision(d)).needs_replan).toBe(true);
      expect(await eventsFault(d)).toMatch(/^cannot be appended to \(EISDIR/);
      await rm(pulse(d, 'events.jsonl'), { recursive: true });
      await writeFile(pulse(d, 'events.jsonl'), text);
      await decision(d);
    },
  },
];
