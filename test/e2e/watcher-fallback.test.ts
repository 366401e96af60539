import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { SystemStatus } from '../../src/system/system-status.js';
import { readEvents, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { readJsonLines, save } from '../support/files.js';
import { inotifyWatches, noInotifyCount } from '../support/inotify.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';

/*
 * A daemon on a machine out of inotify watches, played by a preload that makes fs.watch throw
 * ENOSPC while a flag file exists (taking real watches from the machine would break its other
 * programs): the daemon says so everywhere, still sees edits by polling, and recovers.
 */

const EXHAUST = pathToFileURL(join(import.meta.dirname, '..', 'fixtures', 'exhaust-watches.mjs'));
const FAILED = 'the .pulse/ watch failed: its files are polled every 1 s until it works again';
const RECOVERED = 'the .pulse/ file watcher recovered';

const started = trackStarted();
const flagDirs: string[] = [];

afterEach(async () => {
  await started.cleanUp();
  await Promise.all(flagDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

interface Health {
  ok: boolean;
  watcher: string | null;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('the .pulse/ watcher when the machine is out of inotify watches', () => {
  it('answers 503 and polls while the watch fails, sees guidance and sources.json edits, then recovers and says so once', async (ctx) => {
    const flagDir = await mkdtemp(join(tmpdir(), 'pulse-exhausted-'));
    flagDirs.push(flagDir);
    const flag = join(flagDir, 'exhausted');
    await writeFile(flag, '');
    const project = await tempProject('pulse-fallback-');
    started.projects.push(project);
    const daemon = await startDaemon(project, {
      env: {
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${EXHAUST}`,
        PULSE_TEST_WATCHES_EXHAUSTED: flag,
      },
    });
    started.daemons.push(daemon);
    const get = async <T>(path: string) => {
      const response = await fetch(new URL(path, daemon.url));
      return { status: response.status, body: (await response.json()) as T };
    };

    const health = await get<Health>('/healthz');
    expect(health.status).toBe(503);
    expect(health.body.ok).toBe(false);
    expect(health.body.watcher).toMatch(
      /^the \.pulse\/ watch failed \(ENOSPC: System limit for number of file watchers reached, watch '.+'\): its files are polled every 1 s until it works again$/,
    );
    const status = (await get<SystemStatus>('/status')).body;
    expect(status.watcher).toMatchObject({
      state: 'polling.waiting',
      down: expect.stringMatching(/^ENOSPC/),
    });
    const cli = await runCli(['status', '--project', project]);
    expect(cli.stdout).toContain(`warning:   ${health.body.watcher}`);
    // The status page's first view says it in the same words.
    const page = await (await fetch(new URL('/', daemon.url))).text();
    expect(page).toContain('the .pulse/ watch failed (ENOSPC');
    expect(page).toContain('): its files are polled every 1 s until it works again');
    if ((await noInotifyCount()) === null) expect(await inotifyWatches(daemon.process.pid!)).toBe(0);

    // Polling sees a replan's guidance and a sources.json edit, with no tool call.
    await save(join(project, '.pulse', 'guidance.md'), 'seen by polling\n');
    await waitUntil(
      async () => (await readEvents(project)).some((e) => e.sha256 === sha256('seen by polling\n')),
      { timeoutMs: 10_000, describe: () => 'the guidance edit in events.jsonl' },
    );
    await saveSources(project, '{ "sources": [], "colour": "blue" }\n');
    await waitUntil(
      async () =>
        (await get<SystemStatus>('/status')).body.sources.warnings.some((w) => w.includes('colour')),
      { timeoutMs: 10_000, describe: () => "sources.json's new key warned about in /status" },
    );

    // Watches free again: the next try of the watch (backing off, at most 30 s) works.
    await rm(flag);
    await waitUntil(async () => (await get<Health>('/healthz')).status === 200, {
      timeoutMs: 40_000,
      intervalMs: 100,
      describe: () => '/healthz to answer 200 again',
    });
    expect((await get<Health>('/healthz')).body).toMatchObject({ ok: true, watcher: null });
    expect((await get<SystemStatus>('/status')).body.watcher).toMatchObject({
      state: 'watching',
      down: null,
    });
    // An edit after the recovery is seen by the watch.
    await writeFile(join(project, '.pulse', 'constraints.md'), 'no network\n');
    await waitUntil(
      async () => (await readEvents(project)).some((e) => e.sha256 === sha256('no network\n')),
      { describe: () => 'the constraints edit in events.jsonl' },
    );
    const lines = await readJsonLines<{ msg: string; level: string; error?: string }>(
      join(project, '.pulse', 'pulse.log'),
    );
    const failed = lines.filter((line) => line.msg === FAILED);
    expect(failed, 'said once when it failed').toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 'warn', error: expect.stringMatching(/^ENOSPC/) });
    expect(
      lines.filter((line) => line.msg === RECOVERED),
      'said once when it recovered',
    ).toHaveLength(1);
    ctx.skip((await noInotifyCount()) !== null, 'no /proc: the recovered watches cannot be counted');
    expect(await inotifyWatches(daemon.process.pid!)).toBe(2);
  }, 90_000);
});
