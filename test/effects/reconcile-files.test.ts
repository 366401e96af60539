import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, rename, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PULSE_FILES, untrackedFiles } from '../../machines/pulse-files.js';
import { createReconciler, FRESH_CHANGE_MS } from '../../src/effects/reconcile-files.js';
import { createEventStamper } from '../../src/store/event-id.js';
import { type PulsePaths, pulsePaths } from '../../src/store/paths.js';
import { StateFile } from '../../src/store/state-file.js';
import { removeProject, tempProject } from '../support/daemon.js';

describe('the reconciler and changes too fresh to trust', () => {
  let project: string;
  let paths: PulsePaths;

  beforeEach(async () => {
    project = await tempProject('pulse-fresh-');
    paths = pulsePaths(project);
    await mkdir(paths.dir);
  });

  afterEach(() => removeProject(project));

  /** A reconciler whose clock reads `ageMs` after guidance.md's mtime. */
  const reconcilerAt = async (ageMs: number) => {
    await writeFile(paths.file('guidance.md'), 'new guidance\n');
    const mtimeMs = (await stat(paths.file('guidance.md'))).mtimeMs;
    const { file: stateFile } = await StateFile.load(paths.state, paths.projectRoot);
    return createReconciler({ paths, stamper: createEventStamper(), stateFile, now: () => mtimeMs + ageMs });
  };

  it('defers a watcher scan that finds a change younger than FRESH_CHANGE_MS: it may be half a save', async () => {
    const reconcile = await reconcilerAt(FRESH_CHANGE_MS - 5);
    const out = await reconcile({ files: untrackedFiles(), requested: false, saveHashes: false, gone: [] });
    expect(out.deferred).toBe(true);
    expect(out.events).toEqual([]);
    expect(out.files['guidance.md'].sha256).toBeNull();
  });

  it('logs the same change once it is FRESH_CHANGE_MS old', async () => {
    const reconcile = await reconcilerAt(FRESH_CHANGE_MS);
    const out = await reconcile({ files: untrackedFiles(), requested: false, saveHashes: false, gone: [] });
    expect(out.deferred).toBe(false);
    expect(out.events.map((e) => [e.path, e.kind])).toEqual([['.pulse/guidance.md', 'created']]);
  });

  it('judges freshness as of the scan’s start, however long its reads take on a loaded machine', async () => {
    await writeFile(paths.file('guidance.md'), 'new guidance\n');
    const mtimeMs = (await stat(paths.file('guidance.md'))).mtimeMs;
    const { file: stateFile } = await StateFile.load(paths.state, paths.projectRoot);
    let calls = 0;
    // The first look is 5 ms after the save; any later one would be long after.
    const now = () => mtimeMs + (calls++ === 0 ? 5 : 1000);
    const reconcile = createReconciler({ paths, stamper: createEventStamper(), stateFile, now });
    const out = await reconcile({ files: untrackedFiles(), requested: false, saveHashes: false, gone: [] });
    expect(out.deferred).toBe(true);
    expect(out.events).toEqual([]);
  });

  it('logs a fresh change at once when a caller asked (read-your-writes)', async () => {
    const reconcile = await reconcilerAt(0);
    const out = await reconcile({ files: untrackedFiles(), requested: true, saveHashes: false, gone: [] });
    expect(out.deferred).toBe(false);
    expect(out.events).toHaveLength(1);
  });
});

describe('the reconciler, one file at a time', () => {
  let project: string;
  let paths: PulsePaths;
  let stateFile: StateFile;

  beforeEach(async () => {
    project = await tempProject('pulse-isolate-');
    paths = pulsePaths(project);
    await mkdir(paths.dir);
    for (const name of PULSE_FILES) await writeFile(paths.file(name), `# ${name}\n`);
    ({ file: stateFile } = await StateFile.load(paths.state, paths.projectRoot));
  });

  afterEach(() => removeProject(project));

  const reconcilerWith = (state: Pick<StateFile, 'setHashes'> = stateFile) =>
    createReconciler({ paths, stamper: createEventStamper(), stateFile: state as StateFile });
  const first = async (reconcile = reconcilerWith()) =>
    reconcile({ files: untrackedFiles(), requested: true, saveHashes: false, gone: [] });

  it('reports a symlink (a loop here) for that file alone, and logs the others', async () => {
    await rm(paths.file('task.md'));
    await symlink('task.md', paths.file('task.md'));
    const out = await first();
    expect(out.unreadable).toEqual({
      'task.md': 'is a symlink, and pulse never reads through symlinks: replace it with a regular file',
    });
    expect(out.events.map((e) => e.path)).toEqual([
      '.pulse/guidance.md',
      '.pulse/constraints.md',
      '.pulse/plan.md',
    ]);
    expect(out.files['task.md']).toEqual(untrackedFiles()['task.md']);
  });

  it('keeps what it knew of a file it cannot read, so the change is logged once it can', async () => {
    const reconcile = reconcilerWith();
    const known = await first(reconcile);
    await rm(paths.file('guidance.md'));
    await symlink('guidance.md', paths.file('guidance.md'));
    const blind = await reconcile({ files: known.files, requested: true, saveHashes: false, gone: [] });
    expect(blind.events).toEqual([]);
    expect(blind.files['guidance.md']).toEqual(known.files['guidance.md']);
    await rm(paths.file('guidance.md'));
    await writeFile(paths.file('guidance.md'), 'changed while unreadable\n');
    const seen = await reconcile({ files: blind.files, requested: true, saveHashes: false, gone: [] });
    expect(seen.unreadable).toEqual({});
    expect(seen.events.map((e) => [e.path, e.kind])).toEqual([['.pulse/guidance.md', 'modified']]);
  });

  it('reports a known file found missing as away, keeping what it knew, and logs its deletion only once its window ran out', async () => {
    const reconcile = reconcilerWith();
    const known = await first(reconcile);
    await rm(paths.file('guidance.md'));
    const away = await reconcile({ files: known.files, requested: true, saveHashes: false, gone: [] });
    expect(away.events).toEqual([]);
    expect(away.away).toEqual(['guidance.md']);
    expect(away.files['guidance.md']).toEqual(known.files['guidance.md']);
    const gone = await reconcile({
      files: away.files,
      requested: false,
      saveHashes: false,
      gone: ['guidance.md'],
    });
    expect(gone.away).toEqual([]);
    expect(gone.events.map((e) => [e.path, e.kind, e.sha256])).toEqual([
      ['.pulse/guidance.md', 'deleted', null],
    ]);
    expect(gone.files['guidance.md'].sha256).toBeNull();
  });

  it('logs a file back within its window as one modification, or nothing when its bytes are the same', async () => {
    const reconcile = reconcilerWith();
    const known = await first(reconcile);
    await rename(paths.file('guidance.md'), `${paths.file('guidance.md')}___jb_old___`);
    const away = await reconcile({ files: known.files, requested: true, saveHashes: false, gone: [] });
    expect(away.away).toEqual(['guidance.md']);
    await writeFile(paths.file('guidance.md'), '# guidance.md\n');
    const same = await reconcile({ files: away.files, requested: true, saveHashes: false, gone: [] });
    expect(same).toMatchObject({ events: [], away: [] });
    await rm(paths.file('guidance.md'));
    const again = await reconcile({ files: same.files, requested: true, saveHashes: false, gone: [] });
    expect(again.away).toEqual(['guidance.md']);
    await writeFile(paths.file('guidance.md'), 'saved anew\n');
    const back = await reconcile({
      files: again.files,
      requested: true,
      saveHashes: false,
      gone: ['guidance.md'],
    });
    expect(back.events.map((e) => [e.path, e.kind])).toEqual([['.pulse/guidance.md', 'modified']]);
  });

  it('refuses a folder, a FIFO, a socket and a file over 16 MiB without reading them', async () => {
    await rm(paths.file('task.md'));
    await mkdir(paths.file('task.md'));
    await rm(paths.file('guidance.md'));
    execFileSync('mkfifo', [paths.file('guidance.md')]);
    await rm(paths.file('constraints.md'));
    const socket = createServer();
    await new Promise<void>((resolve) => socket.listen(paths.file('constraints.md'), resolve));
    await truncate(paths.file('plan.md'), 20 * 1024 ** 3);
    try {
      const out = await first();
      expect(out.unreadable).toEqual({
        'task.md': 'is a folder, not a regular file: replace it with a regular file',
        'guidance.md': 'is a FIFO (named pipe), not a regular file: replace it with a regular file',
        'constraints.md': 'is a socket, not a regular file: replace it with a regular file',
        'plan.md': 'is 21474836480 bytes, more than the limit of 16777216 (16 MiB): make it smaller',
      });
      expect(out.events).toEqual([]);
    } finally {
      await new Promise((resolve) => socket.close(resolve));
    }
  });

  it('refuses a symlink to a device or a /proc file as a symlink, never opening its target', async () => {
    await rm(paths.file('guidance.md'));
    await symlink('/proc/self/pagemap', paths.file('guidance.md'));
    await rm(paths.file('constraints.md'));
    await symlink('/dev/zero', paths.file('constraints.md'));
    const out = await first();
    const refused = 'is a symlink, and pulse never reads through symlinks: replace it with a regular file';
    expect(out.unreadable).toEqual({ 'guidance.md': refused, 'constraints.md': refused });
  });

  it('reads and writes nothing while .pulse/ is a symlink', async () => {
    const real = `${paths.dir}-real`;
    await rename(paths.dir, real);
    await symlink(real, paths.dir);
    const out = await first();
    expect(out.folder).toMatch(/^is a symlink to .*-real: pulse never follows \.pulse\/ through a symlink/);
    expect(out.events).toEqual([]);
    expect(out.files).toEqual(untrackedFiles());
    expect(await readdir(real)).not.toContain('events.jsonl');
  });

  it('logs nothing when the append fails, so the next scan logs each change once', async () => {
    await rm(paths.events, { force: true });
    await mkdir(paths.events);
    const reconcile = reconcilerWith();
    const failed = await first(reconcile);
    expect(failed.appendError).toMatch(/^EISDIR/);
    expect(failed.events).toEqual([]);
    expect(failed.files).toEqual(untrackedFiles());
    await rm(paths.events, { recursive: true });
    const logged = await reconcile({ files: failed.files, requested: true, saveHashes: false, gone: [] });
    expect(logged.appendError).toBeNull();
    expect(logged.events).toHaveLength(4);
    expect((await readFile(paths.events, 'utf8')).trim().split('\n')).toHaveLength(4);
  });

  it('keeps the events when state.json cannot be written, says so, and writes the hashes when asked again', async () => {
    let fail = true;
    const state = {
      setHashes: async (hashes: Record<string, string | null>) => {
        if (fail) throw new Error('ENOSPC: no space left on device');
        await stateFile.setHashes(hashes);
      },
    };
    const reconcile = reconcilerWith(state);
    const out = await first(reconcile);
    expect(out.events).toHaveLength(4);
    expect(out).toMatchObject({ hashesSaved: false, stateError: 'ENOSPC: no space left on device' });
    const still = await reconcile({ files: out.files, requested: true, saveHashes: false, gone: [] });
    expect(still).toMatchObject({ events: [], hashesSaved: null });
    fail = false;
    const saved = await reconcile({ files: out.files, requested: true, saveHashes: true, gone: [] });
    expect(saved).toMatchObject({ events: [], hashesSaved: true, stateError: null });
    expect(JSON.parse(await readFile(paths.state, 'utf8')).last_hashes['task.md']).toBe(
      out.files['task.md'].sha256,
    );
  });
});
