import { mkdir, stat, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { untrackedFiles } from '../../machines/pulse-files.js';
import { createReconciler, FRESH_CHANGE_MS } from '../../src/effects/reconcile-files.js';
import { createEventStamper } from '../../src/store/event-id.js';
import { type PulsePaths, pulsePaths } from '../../src/store/paths.js';
import { StateFile } from '../../src/store/state-file.js';
import { removeProject, tempProject } from '../helpers/daemon.js';

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
    const out = await reconcile({ files: untrackedFiles(), requested: false, saveHashes: false });
    expect(out.deferred).toBe(true);
    expect(out.events).toEqual([]);
    expect(out.files['guidance.md'].sha256).toBeNull();
  });

  it('logs the same change once it is FRESH_CHANGE_MS old', async () => {
    const reconcile = await reconcilerAt(FRESH_CHANGE_MS);
    const out = await reconcile({ files: untrackedFiles(), requested: false, saveHashes: false });
    expect(out.deferred).toBe(false);
    expect(out.events.map((e) => [e.path, e.kind])).toEqual([['.pulse/guidance.md', 'created']]);
  });

  it('logs a fresh change at once when a caller asked (read-your-writes)', async () => {
    const reconcile = await reconcilerAt(0);
    const out = await reconcile({ files: untrackedFiles(), requested: true, saveHashes: false });
    expect(out.deferred).toBe(false);
    expect(out.events).toHaveLength(1);
  });
});
