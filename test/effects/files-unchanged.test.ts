import { execFileSync } from 'node:child_process';
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createActor, fromPromise, waitFor } from 'xstate';
import { EventIndex } from '../../machines/event-index.js';
import { eventLogMachine } from '../../machines/event-log.js';
import type { LoadedJournal, ReconcileOutput } from '../../machines/event-log-context.js';
import { UNKNOWN_PLAN } from '../../machines/plan-diff.js';
import { PULSE_FILES, type TrackedFiles, untrackedFiles } from '../../machines/pulse-files.js';
import { filesUnchanged } from '../../src/effects/reconcile-files.js';
import { type PulsePaths, pulsePaths } from '../../src/store/paths.js';
import { isUnchanged, RACY_WINDOW_MS, readTrackedFile } from '../../src/store/read-tracked-file.js';
import { removeProject, tempProject } from '../support/daemon.js';
import { nothingFound } from '../support/reconcile-output.js';

/** What a scan records for the four files as they are now. */
const scan = async (paths: PulsePaths, previous: TrackedFiles = untrackedFiles()): Promise<TrackedFiles> => {
  const files = { ...previous };
  for (const name of PULSE_FILES) files[name] = await readTrackedFile(paths.file(name), previous[name]);
  return files;
};

/** Gives `path` the very times of `reference`, to the nanosecond (`touch -r`). */
const touchLike = (reference: string, path: string) => execFileSync('touch', ['-r', reference, path]);

/** Moves the clock past the racy window, so what was just written counts as settled. */
const settle = () => vi.setSystemTime(Date.now() + RACY_WINDOW_MS + 1_000);

describe('filesUnchanged: whether a tool call can skip the scan', () => {
  let project: string;
  let paths: PulsePaths;

  beforeEach(async () => {
    project = await tempProject('pulse-unchanged-');
    paths = pulsePaths(project);
    await mkdir(paths.dir);
    await writeFile(paths.file('task.md'), 'task\n');
    await writeFile(paths.file('guidance.md'), 'guidance\n');
    vi.useFakeTimers({ toFake: ['Date'] });
  });

  afterEach(async () => {
    vi.useRealTimers();
    await removeProject(project);
  });

  it('is true for settled files nobody touched, absent ones included', async () => {
    settle();
    const files = await scan(paths);
    expect(files['constraints.md'].sha256).toBeNull();
    expect(filesUnchanged(paths, files)).toBe(true);
  });

  it('is false for files written within the racy window, however still they look', async () => {
    const files = await scan(paths);
    expect(filesUnchanged(paths, files)).toBe(false);
    settle();
    expect(filesUnchanged(paths, await scan(paths, files))).toBe(true);
  });

  it('is false after an edit that keeps the size, a delete, or a creation', async () => {
    settle();
    const files = await scan(paths);
    await writeFile(paths.file('guidance.md'), 'GUIDANCE\n');
    expect(filesUnchanged(paths, files)).toBe(false);

    settle();
    const afterEdit = await scan(paths, files);
    await rm(paths.file('task.md'));
    expect(filesUnchanged(paths, afterEdit)).toBe(false);

    settle();
    const afterDelete = await scan(paths, afterEdit);
    expect(filesUnchanged(paths, afterDelete)).toBe(true);
    await writeFile(paths.file('plan.md'), '');
    expect(filesUnchanged(paths, afterDelete)).toBe(false);
  });

  it('is false after an edit that keeps the size and puts the old times back', async () => {
    settle();
    const files = await scan(paths);
    const times = `${paths.dir}/times`;
    touchLike(paths.file('guidance.md'), times);
    await writeFile(paths.file('guidance.md'), 'GUIDANCE\n');
    touchLike(times, paths.file('guidance.md'));
    // Only the ctime, which no one can set, tells.
    expect(filesUnchanged(paths, files)).toBe(false);
  });

  it('is false when another file of the same size and times is put in its place', async () => {
    settle();
    const files = await scan(paths);
    const other = `${paths.file('guidance.md')}.new`;
    await writeFile(other, 'GUIDANCE\n');
    touchLike(paths.file('guidance.md'), other);
    await rename(other, paths.file('guidance.md'));
    expect(filesUnchanged(paths, files)).toBe(false);
  });

  it('is false, not an error, when a protocol file becomes a folder or .pulse/ goes away', async () => {
    settle();
    const files = await scan(paths);
    await mkdir(paths.file('constraints.md'));
    expect(filesUnchanged(paths, files)).toBe(false);
    await rm(paths.dir, { recursive: true });
    expect(filesUnchanged(paths, files)).toBe(false);
  });

  it('is false when .pulse/ is swapped for a symlink to the very same files', async () => {
    settle();
    const files = await scan(paths);
    await rename(paths.dir, `${paths.dir}-moved`);
    await symlink(`${paths.dir}-moved`, paths.dir);
    // Same inodes, same stats: only the folder check tells.
    expect(PULSE_FILES.every((name) => isUnchanged(paths.file(name), files[name]))).toBe(true);
    expect(filesUnchanged(paths, files)).toBe(false);
    await rm(`${paths.dir}-moved`, { recursive: true });
  });
});

describe('the event log answers a caller at once when files are unchanged', () => {
  const loaded: LoadedJournal = {
    index: EventIndex.empty(),
    ack: null,
    agents: [],
    acks: [],
    plan: UNKNOWN_PLAN,
    loadedAt: 0,
    files: untrackedFiles(),
    warnings: [],
  };
  const start = (unchanged: () => boolean) => {
    let scans = 0;
    const actor = createActor(
      eventLogMachine.provide({
        actors: {
          loadJournal: fromPromise(async () => loaded),
          reconcileFiles: fromPromise(async ({ input }): Promise<ReconcileOutput> => {
            scans++;
            return nothingFound(input);
          }),
        },
        guards: { filesUnchanged: unchanged },
      }),
    ).start();
    return { actor, scans: () => scans };
  };
  const idle = { ready: { scan: 'idle' } } as const;

  it('counts the request as answered without a scan when the guard says so', async () => {
    const { actor, scans } = start(() => true);
    await waitFor(actor, (s) => s.matches(idle));
    const before = scans();
    actor.send({ type: 'log.reconcile' });
    const { context } = actor.getSnapshot();
    expect(context.scansCompleted).toBe(context.scansRequested);
    expect(scans()).toBe(before);
    expect(actor.getSnapshot().matches(idle)).toBe(true);
    actor.stop();
  });

  it('answers with no new snapshot when every earlier request is answered and the guard vouches', async () => {
    const { actor, scans } = start(() => true);
    await waitFor(actor, (s) => s.matches(idle));
    const before = actor.getSnapshot();
    const scanned = scans();
    expect(before.context.scansCompleted).toBeGreaterThanOrEqual(before.context.scansRequested);
    actor.send({ type: 'log.reconcile' });
    expect(actor.getSnapshot()).toBe(before);
    expect(scans()).toBe(scanned);
    actor.stop();
  });

  it('scans when the guard cannot vouch for the files', async () => {
    const { actor, scans } = start(() => false);
    await waitFor(actor, (s) => s.matches(idle));
    const before = scans();
    actor.send({ type: 'log.reconcile' });
    const ticket = actor.getSnapshot().context.scansRequested;
    expect(actor.getSnapshot().context.scansCompleted).toBeLessThan(ticket);
    await waitFor(actor, (s) => s.context.scansCompleted >= ticket);
    expect(scans()).toBe(before + 1);
    actor.stop();
  });
});
