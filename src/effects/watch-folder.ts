import { type FSWatcher, watch as fsWatch } from 'node:fs';
import { basename } from 'node:path';
import { fromCallback } from 'xstate';
import { errorMessage } from '../../machines/error-message.js';
import {
  FOCUS_FILE,
  SOURCES_FILE,
  WATCHED_FILES,
  type WatchedName,
  type WatchReport,
} from '../../machines/watcher-context.js';
import type { PulsePaths } from '../store/paths.js';
import { createChangeReporter } from './change-reporter.js';

/** `fs.watch` as the effect calls it: one folder, not recursive; tests hand in one that fails. */
export type WatchFolder = (path: string, listener: (event: string, name: string | null) => void) => FSWatcher;

const OWNED: ReadonlySet<string> = new Set(WATCHED_FILES);
const isOwned = (name: string): name is WatchedName => OWNED.has(name);
const ABSENT = new Set(['ENOENT', 'ENOTDIR']);

/**
 * Two inotify watches, whatever else lies in `.pulse/`: `.pulse/` itself, not recursive, its
 * notices filtered by name to the files pulse owns, and the project root, for `.pulse/` being
 * removed and created again. Not chokidar: it stats every entry of a watched folder before its
 * `ignored` filter runs and watches each file it keeps, one inotify watch per stray file.
 * A watch that cannot be set up or fails (ENOSPC: out of inotify watches) closes both and is
 * reported once as `watch.error`; `watch.ready` says both are up.
 */
export const createFolderWatcher = (paths: PulsePaths, { watch = fsWatch as WatchFolder } = {}) =>
  fromCallback<WatchReport>(({ sendBack }) => {
    const reporter = createChangeReporter(paths.dir, (name) => sendBack({ type: 'watch.change', name }));
    const folderName = basename(paths.dir);
    let folder: FSWatcher | undefined;
    let root: FSWatcher | undefined;
    let failed = false;
    const close = () => {
      folder?.close();
      root?.close();
      folder = root = undefined;
      reporter.stop();
    };
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      close();
      sendBack({ type: 'watch.error', message: errorMessage(error) });
    };
    const open = (path: string, listener: (name: string | null) => void) => {
      const watcher = watch(path, (_event, name) => listener(name));
      watcher.on('error', fail);
      return watcher;
    };
    /** Watches .pulse/ as it is now (none while it is absent); false when the watch failed. */
    const watchFolder = (): boolean => {
      folder?.close();
      folder = undefined;
      try {
        folder = open(paths.dir, (name) => {
          if (name === null) reporter.notice('unknown');
          else if (isOwned(name)) reporter.notice(name);
        });
      } catch (error) {
        if (!ABSENT.has((error as NodeJS.ErrnoException).code ?? '')) fail(error);
      }
      return !failed;
    };
    try {
      root = open(paths.projectRoot, (name) => {
        // .pulse/ appeared, went or was swapped: a change made in it before the new watch began
        // was seen by no watch, so each owner looks again.
        if ((name === null || name === folderName) && watchFolder()) {
          for (const owned of ['unknown', SOURCES_FILE, FOCUS_FILE] as const) reporter.notice(owned);
        }
      });
    } catch (error) {
      fail(error);
    }
    if (!failed && watchFolder()) sendBack({ type: 'watch.ready' });
    return close;
  });
