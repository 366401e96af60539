import { createHash } from 'node:crypto';
import { type FSWatcher, watch as fsWatch } from 'node:fs';
import { mkdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Actor, assign, createActor, setup } from 'xstate';
import type { WatchReport } from '../../machines/watcher-context.js';
import { createFolderWatcher, type WatchFolder } from '../../src/effects/watch-folder.js';
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
} from '../support/daemon.js';
import { inotifyWatches, noInotifyCount } from '../support/inotify.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const projects: string[] = [];
let daemon: RunningDaemon | undefined;
const others: RunningDaemon[] = [];

afterEach(async () => {
  await Promise.all([daemon, ...others.splice(0)].map((d) => d?.kill9()));
  daemon = undefined;
  await Promise.all(projects.splice(0).map(removeProject));
});

/** Writes `count` empty files that are not pulse's into `dir`, a few hundred at a time. */
const writeStrays = async (dir: string, count: number, from = 0) => {
  for (let i = from; i < from + count; i += 250) {
    const batch = Array.from({ length: Math.min(250, from + count - i) }, (_, k) => `stray-${i + k}.txt`);
    await Promise.all(batch.map((name) => writeFile(join(dir, name), '')));
  }
};

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

describe('the .pulse/ watcher, through the daemon (real inotify, no tool calls)', () => {
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
    // Back within its replace window it is one modification; after it, a deletion and a creation.
    await awaitEvent(project, 'constraints.md', 'modified|created', 'no network\n');
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

  it('holds two inotify watches with 5,000 stray files in .pulse/, as with none, and still logs edits', async (ctx) => {
    const unable = await noInotifyCount();
    ctx.skip(unable !== null, unable ?? '');
    // No stray file at start; then 5,000 made while it runs.
    const { project, pulse } = await startOnProject();
    await writeFile(join(pulse, 'guidance.md'), 'first\n');
    await awaitEvent(project, 'guidance.md', 'modified', 'first\n');
    const atStart = await inotifyWatches(daemon!.process.pid!);
    await writeStrays(pulse, 5000);
    // The edit is logged after the strays' notices: the watcher has been through them.
    await writeFile(join(pulse, 'guidance.md'), 'after the strays\n');
    await awaitEvent(project, 'guidance.md', 'modified', 'after the strays\n');
    const withStrays = await inotifyWatches(daemon!.process.pid!);
    // 5,000 stray files already there when the daemon starts.
    const crowded = await tempProject('pulse-watch-');
    projects.push(crowded);
    await mkdir(join(crowded, '.pulse'));
    await writeStrays(join(crowded, '.pulse'), 5000);
    const other = await startDaemon(crowded);
    others.push(other);
    await writeFile(join(crowded, '.pulse', 'constraints.md'), 'no network\n');
    await awaitEvent(crowded, 'constraints.md', 'modified|created', 'no network\n');
    const startedCrowded = await inotifyWatches(other.process.pid!);
    expect({ atStart, withStrays, startedCrowded }).toEqual({ atStart: 2, withStrays: 2, startedCrowded: 2 });
  });
});
describe('createFolderWatcher on its own', () => {
  interface Recorded {
    reports: WatchReport[];
  }

  const recorder = (project: string, options: { watch?: WatchFolder } = {}) =>
    setup({
      types: { context: {} as Recorded, events: {} as WatchReport },
      actors: { folder: createFolderWatcher(pulsePaths(project), options) },
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

  const reportsOf = (a: Actor<ReturnType<typeof recorder>>) => a.getSnapshot().context.reports;
  const changes = (a: Actor<ReturnType<typeof recorder>>) =>
    reportsOf(a).flatMap((r) => (r.type === 'watch.change' ? [r.name] : []));
  const errors = (a: Actor<ReturnType<typeof recorder>>) =>
    reportsOf(a).filter((r) => r.type === 'watch.error');

  /** A project with `.pulse/` (unless told otherwise) and the effect started on it. */
  const startOn = async ({
    withFolder = true,
    watch,
  }: {
    withFolder?: boolean;
    watch?: WatchFolder;
  } = {}) => {
    const project = await tempProject('pulse-watcher-');
    projects.push(project);
    if (withFolder) await ensurePulseFolder(pulsePaths(project));
    actor = createActor(recorder(project, watch ? { watch } : {})).start();
    return { project, pulse: join(project, '.pulse'), a: actor };
  };

  const enospc = (path: string) =>
    Object.assign(new Error(`ENOSPC: System limit for number of file watchers reached, watch '${path}'`), {
      code: 'ENOSPC',
      errno: -28,
      syscall: 'watch',
    });

  it('reports the six files pulse owns by name and stays silent about everything else in the project', async () => {
    const { project, pulse, a } = await startOn();
    expect(reportsOf(a)).toEqual([{ type: 'watch.ready' }]);
    await mkdir(join(project, 'src'));
    await writeFile(join(project, 'guidance.md'), 'not the protocol file\n');
    await writeFile(join(project, 'src', 'plan.md'), 'deeper\n');
    await writeFile(join(pulse, 'notes.txt'), 'not watched\n');
    await writeFile(join(pulse, 'guidance.md~'), 'backup\n');
    await writeFile(join(pulse, 'sources.json.tmp'), '{}');
    await mkdir(join(pulse, 'plan.md.d'));
    await writeFile(join(pulse, 'plan.md.d', 'plan.md'), 'in a folder of .pulse/\n');
    for (const name of ['constraints.md', 'sources.json', 'focus.json'])
      await writeFile(join(pulse, name), '{}');
    await waitUntil(() => changes(a).includes('focus.json'), { describe: () => 'focus.json' });
    expect(new Set(changes(a))).toEqual(new Set(['constraints.md', 'sources.json', 'focus.json']));
    expect(errors(a)).toEqual([]);
  });

  it('reports a second save made inside the 50 ms window after the first report', async () => {
    const { pulse, a } = await startOn();
    const guidanceReports = () => changes(a).filter((name) => name === 'guidance.md').length;
    await writeFile(join(pulse, 'guidance.md'), 'first save\n');
    await waitUntil(() => guidanceReports() > 0, { intervalMs: 1, describe: () => 'the first save' });
    const seen = guidanceReports();
    // A formatter rewriting the file right after the editor saved it, say.
    await writeFile(join(pulse, 'guidance.md'), 'second save, a few ms later\n');
    await waitUntil(() => guidanceReports() > seen, { timeoutMs: 2000, describe: () => 'the second save' });
  });

  it('watches .pulse/ once it is created, and has every owner look at it', async () => {
    const { pulse, a } = await startOn({ withFolder: false });
    expect(reportsOf(a)).toEqual([{ type: 'watch.ready' }]);
    await mkdir(pulse);
    await waitUntil(() => changes(a).includes('focus.json'), {
      describe: () => 'the hints for a new .pulse/',
    });
    expect(changes(a)).toEqual(expect.arrayContaining(['unknown', 'sources.json', 'focus.json']));
    await writeFile(join(pulse, 'task.md'), 'in the new folder\n');
    await waitUntil(() => changes(a).includes('task.md'), { describe: () => 'task.md in the new folder' });
  });

  it('lets go of both inotify watches when the actor stops', async (ctx) => {
    const unable = await noInotifyCount();
    ctx.skip(unable !== null, unable ?? '');
    const before = await inotifyWatches('self');
    const { a } = await startOn();
    expect(await inotifyWatches('self')).toBe(before + 2);
    a.stop();
    expect(await inotifyWatches('self')).toBe(before);
  });

  it('reports ENOSPC once as watch.error, and keeps no watch, when .pulse/ cannot be watched', async (ctx) => {
    const unable = await noInotifyCount();
    const before = unable === null ? await inotifyWatches('self') : 0;
    const watched: string[] = [];
    const { pulse, a } = await startOn({
      // The root gets its watch; .pulse/ finds none left.
      watch: (path, listener) => {
        watched.push(path);
        if (path.endsWith('.pulse')) throw enospc(path);
        return fsWatch(path, listener);
      },
    });
    expect(reportsOf(a)).toEqual([
      {
        type: 'watch.error',
        message: `ENOSPC: System limit for number of file watchers reached, watch '${pulse}'`,
      },
    ]);
    expect(watched).toHaveLength(2);
    ctx.skip(unable !== null, unable ?? '');
    expect(await inotifyWatches('self'), 'the root watch was closed too').toBe(before);
  });

  it('reports a watch that fails while it runs once as watch.error, and closes both watches', async () => {
    const opened: FSWatcher[] = [];
    const { a } = await startOn({
      watch: (path, listener) => {
        const watcher = fsWatch(path, listener);
        opened.push(watcher);
        return watcher;
      },
    });
    expect(opened).toHaveLength(2);
    const closed = opened.map((watcher) => new Promise((resolve) => watcher.once('close', resolve)));
    opened[1]!.emit(
      'error',
      Object.assign(new Error('EMFILE: too many open files, watch'), { code: 'EMFILE' }),
    );
    opened[0]!.emit('error', new Error('a second error is not reported'));
    await Promise.all(closed);
    expect(reportsOf(a)).toEqual([
      { type: 'watch.ready' },
      { type: 'watch.error', message: 'EMFILE: too many open files, watch' },
    ]);
  });
});
