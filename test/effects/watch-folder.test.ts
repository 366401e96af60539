import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Actor, assign, createActor, setup } from 'xstate';
import type { WatchReport } from '../../machines/watcher.js';
import { createFolderWatcher } from '../../src/effects/watch-folder.js';
import { pulsePaths } from '../../src/store/paths.js';
import { ensurePulseFolder } from '../../src/store/pulse-folder.js';
import {
  type LoggedEvent,
  oneShot,
  type RunningDaemon,
  removeProject,
  startDaemon,
  tempProject,
  waitUntil,
} from '../helpers/daemon.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const projects: string[] = [];
let daemon: RunningDaemon | undefined;

afterEach(async () => {
  await daemon?.kill9();
  daemon = undefined;
  await Promise.all(projects.splice(0).map(removeProject));
});

/** events.jsonl as it is now; none while `.pulse/` itself is gone. */
const eventsOf = async (project: string): Promise<LoggedEvent[]> => {
  let text: string;
  try {
    text = await readFile(join(project, '.pulse', 'events.jsonl'), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
};

/** Waits (bounded) for the watcher to bring an event for `name` of one of `kinds` and, if given, `content`. */
const awaitEvent = (project: string, name: string, kinds: string, content?: string) =>
  waitUntil(
    async () =>
      (await eventsOf(project)).find(
        (e) =>
          e.path === `.pulse/${name}` &&
          kinds.split('|').includes(e.kind) &&
          (content === undefined || e.sha256 === sha256(content)),
      ),
    { describe: () => `a ${kinds} event for .pulse/${name} in events.jsonl` },
  );

const startOnProject = async () => {
  const project = await tempProject('pulse-watch-');
  projects.push(project);
  daemon = await startDaemon(project);
  return { project, pulse: join(project, '.pulse') };
};

describe('the .pulse/ watcher, through the daemon (real chokidar, no tool calls)', () => {
  it('logs an edit to guidance.md without any tool call', async () => {
    const { project, pulse } = await startOnProject();
    await writeFile(join(pulse, 'guidance.md'), '# Guidance\n\nUse Postgres, not SQLite.\n');
    const event = await awaitEvent(
      project,
      'guidance.md',
      'modified',
      '# Guidance\n\nUse Postgres, not SQLite.\n',
    );
    expect(event.id).toMatch(/^evt_\d{8}T\d{12}Z_[0-9a-f]{8}$/);
  });

  it('logs the last of two quick saves, without any tool call', async () => {
    const { project, pulse } = await startOnProject();
    await writeFile(join(pulse, 'guidance.md'), 'draft\n');
    await waitUntil(async () => (await eventsOf(project)).some((e) => e.sha256 === sha256('draft\n')), {
      intervalMs: 2,
      describe: () => 'the draft in events.jsonl',
    });
    await writeFile(join(pulse, 'guidance.md'), 'final wording\n');
    await awaitEvent(project, 'guidance.md', 'modified', 'final wording\n');
  });

  it('logs deleted when guidance.md is removed, and created when it comes back', async () => {
    const { project, pulse } = await startOnProject();
    await unlink(join(pulse, 'guidance.md'));
    const deleted = await awaitEvent(project, 'guidance.md', 'deleted');
    expect(deleted.sha256).toBeNull();
    await writeFile(join(pulse, 'guidance.md'), 'back again\n');
    await awaitEvent(project, 'guidance.md', 'created', 'back again\n');
    const kinds = (await eventsOf(project)).filter((e) => e.path === '.pulse/guidance.md').map((e) => e.kind);
    expect(kinds).toEqual(['deleted', 'created']);
  });

  it('keeps watching when the whole .pulse/ folder is removed and created again', async () => {
    const { project, pulse } = await startOnProject();
    // Retried: the daemon may be writing into .pulse/ while it goes.
    await rm(pulse, { recursive: true, maxRetries: 5 });
    // The daemon noticed: it reports that it cannot write its log while the folder is gone.
    await waitUntil(
      async () => {
        const health = (await (await fetch(daemon!.url.replace(/\/mcp$/, '/healthz'))).json()) as {
          error: string | null;
        };
        return health.error !== null;
      },
      { describe: () => 'the daemon to notice that .pulse/ is gone' },
    );
    await mkdir(pulse);
    await writeFile(join(pulse, 'guidance.md'), 'a new folder\n');
    // 'created' when a scan caught the new folder still empty (then the files were deleted).
    await awaitEvent(project, 'guidance.md', 'modified|created', 'a new folder\n');
    // A later edit in the recreated folder is still seen.
    await writeFile(join(pulse, 'guidance.md'), 'edited in the new folder\n');
    await awaitEvent(project, 'guidance.md', 'modified', 'edited in the new folder\n');
  });

  it('keeps watching when .pulse/ is swapped for a new folder in one quick step', async () => {
    const { project, pulse } = await startOnProject();
    await rm(pulse, { recursive: true, maxRetries: 5 });
    await mkdir(pulse);
    await writeFile(join(pulse, 'guidance.md'), 'swapped\n');
    await awaitEvent(project, 'guidance.md', 'modified|created', 'swapped\n');
    await writeFile(join(pulse, 'constraints.md'), 'no network\n');
    await awaitEvent(project, 'constraints.md', 'created', 'no network\n');
  });

  it('logs nothing for editor temp and backup files, and one modified event for a vim-style save', async () => {
    const { project, pulse } = await startOnProject();
    const guidance = join(pulse, 'guidance.md');
    for (const name of ['guidance.md~', '.guidance.md.swp', '4913', '#guidance.md#']) {
      await writeFile(join(pulse, name), 'editor scratch\n');
      await writeFile(join(pulse, name), 'editor scratch, changed\n');
    }
    await unlink(join(pulse, '4913'));
    // vim with backupcopy=no: move the original aside, write the new file, drop the backup.
    await rename(guidance, join(pulse, 'guidance.md~'));
    await writeFile(guidance, 'saved by vim\n');
    await unlink(join(pulse, 'guidance.md~'));
    await awaitEvent(project, 'guidance.md', 'modified', 'saved by vim\n');
    // A reconcile after the fact adds nothing: the log already holds every change.
    await oneShot(daemon!.url, 'tools/call', { name: 'pulse_should_interrupt', arguments: {} });
    const events = await eventsOf(project);
    expect(events.map((e) => `${e.kind} ${e.path}`)).toEqual(['modified .pulse/guidance.md']);
  });

  it('logs exactly one modified event for an atomic save (temp file renamed over guidance.md)', async () => {
    const { project, pulse } = await startOnProject();
    const temp = join(pulse, '.guidance.md.tmp-4242');
    await writeFile(temp, 'atomically saved\n');
    await rename(temp, join(pulse, 'guidance.md'));
    await awaitEvent(project, 'guidance.md', 'modified', 'atomically saved\n');
    await oneShot(daemon!.url, 'tools/call', { name: 'pulse_should_interrupt', arguments: {} });
    const events = await eventsOf(project);
    expect(events.map((e) => `${e.kind} ${e.path}`)).toEqual(['modified .pulse/guidance.md']);
  });
});

describe('createFolderWatcher on its own', () => {
  interface Recorded {
    reports: WatchReport[];
  }

  const recorder = (project: string, closing: Promise<void>[]) =>
    setup({
      types: { context: {} as Recorded, events: {} as WatchReport },
      actors: { folder: createFolderWatcher(pulsePaths(project), (promise) => closing.push(promise)) },
    }).createMachine({
      context: { reports: [] },
      invoke: { src: 'folder' },
      on: {
        '*': { actions: assign(({ context, event }) => ({ reports: [...context.reports, event] })) },
      },
    });

  let actor: Actor<ReturnType<typeof recorder>> | undefined;
  afterEach(() => {
    actor?.stop();
    actor = undefined;
  });

  const changes = (a: Actor<ReturnType<typeof recorder>>) =>
    a
      .getSnapshot()
      .context.reports.filter((r) => r.type === 'watch.change')
      .map((r) => (r.type === 'watch.change' ? r.name : ''));

  it('reports the four protocol files by name and stays silent about everything else in the project', async () => {
    const project = await tempProject('pulse-watcher-');
    projects.push(project);
    await ensurePulseFolder(pulsePaths(project));
    await mkdir(join(project, 'src'));
    const closing: Promise<void>[] = [];
    actor = createActor(recorder(project, closing)).start();
    const a = actor;
    await waitUntil(() => a.getSnapshot().context.reports.some((r) => r.type === 'watch.ready'), {
      describe: () => 'watch.ready',
    });
    await writeFile(join(project, 'guidance.md'), 'not the protocol file\n');
    await writeFile(join(project, 'src', 'plan.md'), 'deeper\n');
    await writeFile(join(project, '.pulse', 'notes.txt'), 'not watched\n');
    await writeFile(join(project, '.pulse', 'guidance.md~'), 'backup\n');
    await writeFile(join(project, '.pulse', 'constraints.md'), 'only this one\n');
    await waitUntil(() => changes(a).includes('constraints.md'), { describe: () => 'constraints.md' });
    expect(new Set(changes(a))).toEqual(new Set(['constraints.md']));
    expect(a.getSnapshot().context.reports.filter((r) => r.type === 'watch.error')).toEqual([]);
  });

  it("reports a second save made inside chokidar's 50 ms change throttle", async () => {
    const project = await tempProject('pulse-watcher-');
    projects.push(project);
    await ensurePulseFolder(pulsePaths(project));
    actor = createActor(recorder(project, [])).start();
    const a = actor;
    await waitUntil(() => a.getSnapshot().context.reports.some((r) => r.type === 'watch.ready'), {
      describe: () => 'watch.ready',
    });
    const guidanceReports = () => changes(a).filter((name) => name === 'guidance.md').length;
    await writeFile(join(project, '.pulse', 'guidance.md'), 'first save\n');
    await waitUntil(() => guidanceReports() > 0, { intervalMs: 1, describe: () => 'the first save' });
    const seen = guidanceReports();
    // A formatter rewriting the file right after the editor saved it, say.
    await writeFile(join(project, '.pulse', 'guidance.md'), 'second save, a few ms later\n');
    await waitUntil(() => guidanceReports() > seen, { timeoutMs: 2000, describe: () => 'the second save' });
  });

  it('hands over a close promise that settles when the actor stops', async () => {
    const project = await tempProject('pulse-watcher-');
    projects.push(project);
    await ensurePulseFolder(pulsePaths(project));
    const closing: Promise<void>[] = [];
    const a = createActor(recorder(project, closing)).start();
    await waitUntil(() => a.getSnapshot().context.reports.some((r) => r.type === 'watch.ready'), {
      describe: () => 'watch.ready',
    });
    expect(closing).toHaveLength(0);
    a.stop();
    expect(closing).toHaveLength(1);
    await expect(closing[0]).resolves.toBeUndefined();
  });
});
