import { type Stats, unwatchFile, watchFile } from 'node:fs';
import { join } from 'node:path';
import { fromCallback } from 'xstate';
import { WATCHED_FILES, type WatchReport } from '../../machines/watcher-context.js';
import type { PulsePaths } from '../store/paths.js';

/** How often each file pulse owns is looked at while the watch is down. */
export const POLL_INTERVAL_MS = 1_000;

/**
 * The fallback while the watch is down: `fs.watchFile` on each of the six files pulse owns under
 * `.pulse/`, a stat per file and interval and no inotify watch, reporting a file whose stat
 * changed (created, written, removed, replaced).
 */
export const createFolderPoller = (paths: PulsePaths, { intervalMs = POLL_INTERVAL_MS } = {}) =>
  fromCallback<WatchReport>(({ sendBack }) => {
    const stops = WATCHED_FILES.map((name) => {
      const path = join(paths.dir, name);
      // Node calls once at the start for a file that is not there: nothing changed yet.
      const listener = (now: Stats, before: Stats) => {
        if (now.ino !== 0 || before.ino !== 0) sendBack({ type: 'watch.change', name });
      };
      watchFile(path, { interval: intervalMs }, listener);
      return () => unwatchFile(path, listener);
    });
    return () => {
      for (const stop of stops) stop();
    };
  });
