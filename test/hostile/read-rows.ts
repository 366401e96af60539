import { execFileSync } from 'node:child_process';
import { access, mkdir, readdir, readFile, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type RunningDaemon, runCli, startDaemon, waitUntil } from '../support/daemon.js';
import { PLANTED_SECRET } from '../support/planted-secret.js';
import {
  faultOf,
  health,
  pulseStatus,
  recovered,
  SYMLINK_REFUSED,
  saysLoudly,
  swapIn,
} from './blind-rows.js';
import { contextText, decision, edit, type HostileCase, status } from './harness.js';

// Reads stay in the project (issue 32): a `.pulse/` file that is a symlink to a file elsewhere
// (~/.ssh/id_rsa, say), or a special file, is never read, at start or when swapped in later; pulse
// names the file and the fix. The planted secret must appear nowhere pulse shows or sends.

const pulse = (d: RunningDaemon, name = '') => join(d.project, '.pulse', name);

const REFUSED = 'is a symlink, and pulse never reads through symlinks: replace it with a regular file';
const TRACKED = ['task.md', 'guidance.md', 'constraints.md', 'plan.md'] as const;

/** A file outside the project holding the secret, as `~/.ssh/id_rsa` would. */
const plantSecret = async (d: RunningDaemon, name = 'id_rsa', text = `# Key\n${PLANTED_SECRET}\n`) => {
  const path = `${d.project}-home-${name}`;
  await writeFile(path, text);
  return path;
};

/** Every place pulse shows or sends what it read: none may hold the secret. */
const assertSecretNowhere = async (d: RunningDaemon) => {
  const places = {
    context: await contextText(d),
    status: JSON.stringify(await status(d)),
    healthz: JSON.stringify((await health(d)).body),
    'pulse status': await pulseStatus(d),
    'daemon output': d.output(),
    'pulse.log': await readFile(pulse(d, 'pulse.log'), 'utf8').catch(() => ''),
    'events.jsonl': await readFile(pulse(d, 'events.jsonl'), 'utf8'),
  };
  for (const [place, text] of Object.entries(places)) expect(text, place).not.toContain(PLANTED_SECRET);
};

/** The four protocol files as they are now, to put back after a row. */
const keepTracked = async (d: RunningDaemon) =>
  Object.fromEntries(
    await Promise.all(TRACKED.map(async (name) => [name, await readFile(pulse(d, name), 'utf8')] as const)),
  );

export const readRows: HostileCase[] = [
  {
    name: 'the four protocol files swapped for symlinks to a secret outside while running: none is read, guidance fails closed, every surface names each link and the fix',
    bug: 'read through: the target of a symlinked task.md went into pulse://context/latest (issue 32)',
    run: async (d) => {
      const kept = await keepTracked(d);
      const secret = await plantSecret(d);
      for (const name of TRACKED) await swapIn(d, name, (path) => symlink(secret, path));
      await saysLoudly(d, '.pulse/guidance.md', SYMLINK_REFUSED);
      await saysLoudly(d, '.pulse/constraints.md', SYMLINK_REFUSED);
      await saysLoudly(d, '.pulse/task.md', SYMLINK_REFUSED, { hidesGuidance: false });
      await saysLoudly(d, '.pulse/plan.md', SYMLINK_REFUSED, { hidesGuidance: false });
      const context = await contextText(d);
      for (const name of TRACKED) {
        // What pulse read before the swap stays, marked: the link's target never replaces it.
        expect(context).toContain(
          `${kept[name]!.trim()}\n\n[pulse: cannot read .pulse/${name} now: it ${REFUSED}. Above is the last version pulse read.]`,
        );
      }
      await assertSecretNowhere(d);
      for (const name of TRACKED) await edit(d, name, kept[name]!);
      await decision(d);
      await recovered(d);
    },
  },
  {
    name: 'symlinks to secrets planted before start (task.md, plan.md, guidance.md, sources.json, focus.json): the daemon starts, reads none, runs nothing, and names each',
    run: async (d) => {
      expect(await d.stop()).toBe(0);
      const kept = await keepTracked(d);
      const ran = `${d.project}-ran`;
      const secrets = {
        'task.md': await plantSecret(d),
        'plan.md': await plantSecret(d),
        'guidance.md': await plantSecret(d),
        'sources.json': await plantSecret(
          d,
          'mcp.json',
          JSON.stringify({
            mcpServers: {
              s: {
                command: process.execPath,
                args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(ran)}, 'ran')`],
                env: { KEY: PLANTED_SECRET },
              },
            },
            sources: [{ name: 's', server: 's', tool: 't', interval_sec: 1 }],
          }),
        ),
        'focus.json': await plantSecret(
          d,
          'focus.json',
          JSON.stringify({ until: '2999-01-01T00:00:00Z', note: PLANTED_SECRET }),
        ),
      };
      for (const [name, target] of Object.entries(secrets)) {
        await rm(pulse(d, name), { force: true });
        await symlink(target, pulse(d, name));
      }
      const next = await startDaemon(d.project);
      await saysLoudly(next, '.pulse/guidance.md', SYMLINK_REFUSED);
      await saysLoudly(next, '.pulse/task.md', SYMLINK_REFUSED, { hidesGuidance: false });
      const sources = await waitUntil(async () => (await status(next)).sources.error ?? undefined);
      expect(sources).toMatch(
        /sources\.json at \(top level\): is a symlink, and pulse never reads through symlinks/,
      );
      const focus = await waitUntil(async () => (await status(next)).focus.last_error ?? undefined);
      expect(focus).toMatch(/focus\.json is a symlink, and pulse never reads through symlinks/);
      expect((await status(next)).focus.until).toBeNull();
      const context = await contextText(next);
      expect(context).toContain(
        `## Task\n[pulse: cannot read .pulse/task.md now: it ${REFUSED}. pulse has read no version of it, so none is shown.]`,
      );
      await assertSecretNowhere(next);
      await expect(access(ran), 'the linked sources.json started its server').rejects.toThrow(/ENOENT/);
      for (const name of ['sources.json', 'focus.json']) await rm(pulse(d, name));
      for (const name of ['task.md', 'plan.md', 'guidance.md'] as const) await edit(next, name, kept[name]!);
      await decision(next);
      await recovered(next);
      return next;
    },
  },
  {
    name: "pulse's own files as a symlink, a FIFO or a folder at start: pulse start refuses at once, naming the file and the fix, and reads none",
    run: async (d) => {
      expect(await d.stop()).toBe(0);
      const secret = await plantSecret(d);
      const cases: [string, (path: string) => Promise<unknown> | unknown, RegExp][] = [
        ['state.json', (path) => symlink(secret, path), /state\.json is a symlink, and pulse never reads/],
        ['events.jsonl', (path) => execFileSync('mkfifo', [path]), /events\.jsonl is a FIFO \(named pipe\)/],
        ['inbox.jsonl', (path) => symlink(secret, path), /inbox\.jsonl is a symlink, and pulse never reads/],
        [
          'external_seen.jsonl',
          (path) => mkdir(path),
          /external_seen\.jsonl is a folder, not a regular file/,
        ],
      ];
      for (const [name, make, refusal] of cases) {
        const moved = `${pulse(d, name)}.kept`;
        const had = await rename(pulse(d, name), moved).then(
          () => true,
          () => false,
        );
        await make(pulse(d, name));
        const { code, stderr } = await runCli(['start', '--project', d.project, '--port', '0']);
        expect(code, stderr).toBe(1);
        expect(stderr).toMatch(refusal);
        expect(stderr).toContain('replace it with a regular file');
        expect(stderr).not.toContain(PLANTED_SECRET);
        await rm(pulse(d, name), { recursive: true });
        if (had) await rename(moved, pulse(d, name));
      }
      return startDaemon(d.project);
    },
  },
  {
    name: 'plan.md as a FIFO and task.md as a folder while running: refused at once and named; no hold for them',
    run: async (d) => {
      const kept = await keepTracked(d);
      await swapIn(d, 'plan.md', (path) => {
        execFileSync('mkfifo', [path]);
      });
      // A folder cannot be renamed over a file: a scan may see task.md missing in between (no hold either way).
      await rm(pulse(d, 'task.md'));
      await mkdir(pulse(d, 'task.md'));
      await saysLoudly(d, '.pulse/plan.md', /^is a FIFO \(named pipe\), not a regular file/, {
        hidesGuidance: false,
      });
      await saysLoudly(d, '.pulse/task.md', /^is a folder, not a regular file/, { hidesGuidance: false });
      await rm(pulse(d, 'task.md'), { recursive: true });
      for (const name of ['task.md', 'plan.md'] as const) await edit(d, name, kept[name]!);
      await decision(d);
      await recovered(d);
    },
  },
  {
    name: 'the project folder swapped for a symlink while running: .pulse/ is refused and nothing is read or written through it; put back, pulse recovers',
    run: async (d) => {
      const elsewhere = `${d.project}-elsewhere`;
      await mkdir(join(elsewhere, '.pulse'), { recursive: true });
      for (const name of TRACKED)
        await writeFile(join(elsewhere, '.pulse', name), `# ${name}\n${PLANTED_SECRET}\n`);
      const real = `${d.project}-real`;
      await rename(d.project, real);
      await symlink(elsewhere, d.project);
      // The watcher follows the folder it watches to its new name: the next call is what looks.
      expect((await decision(d)).needs_replan).toBe(true);
      const reason = await faultOf(d, '.pulse/', /^is inside .*, which is a symlink now/);
      expect(reason).toBe(
        `is inside ${d.project}, which is a symlink now: pulse never follows the project folder through a symlink; put the real folder back, or start pulse on the folder it points to`,
      );
      expect((await health(d)).status).toBe(503);
      expect(await pulseStatus(d)).toContain(`problem:   .pulse/ ${reason}`);
      expect(await contextText(d)).not.toContain(PLANTED_SECRET);
      expect((await readdir(join(elsewhere, '.pulse'))).sort()).toEqual([...TRACKED].sort());
      await unlink(d.project);
      await rename(real, d.project);
      await rm(elsewhere, { recursive: true });
      await decision(d);
      await recovered(d);
    },
  },
];
