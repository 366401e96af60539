import { basename, dirname, sep } from 'node:path';
import { watch } from 'chokidar';
import { fromCallback } from 'xstate';
import { PULSE_FILES } from '../../machines/pulse-files.js';
import { FOCUS_FILE, SOURCES_FILE, type WatchedName, type WatchReport } from '../../machines/watcher.js';
import type { PulsePaths } from '../store/paths.js';

const WATCHED: ReadonlySet<string> = new Set([...PULSE_FILES, SOURCES_FILE, FOCUS_FILE]);
/** chokidar drops a path's `change` events for this long after reporting one, with no trailing event. */
const CHOKIDAR_CHANGE_THROTTLE_MS = 50;

/**
 * chokidar on the project root, one level deep, seeing only `.pulse/` and what is in it: the
 * watch survives `.pulse/` itself being removed and recreated. Editor temp and backup files
 * are never reported; atomic saves (write temp, rename) are coalesced by chokidar's `atomic`.
 * `onClosed` receives the close promise, so shutdown can await it.
 */
export const createFolderWatcher = (paths: PulsePaths, onClosed: (closing: Promise<void>) => void) =>
  fromCallback<WatchReport>(({ sendBack }) => {
    const inScope = (path: string) =>
      path === paths.projectRoot || path === paths.dir || dirname(path) === paths.dir;
    const watcher = watch(paths.projectRoot, {
      depth: 1,
      ignoreInitial: true,
      atomic: true,
      ignored: (path: string) => !inScope(path.endsWith(sep) ? path.slice(0, -1) : path),
    });
    // A second save inside chokidar's throttle window would go unreported, so every report is
    // followed by one more once the window has passed; the log owner hashes, so extras are cheap.
    const trailing = new Map<string, NodeJS.Timeout>();
    const report = (name: WatchedName) => {
      sendBack({ type: 'watch.change', name });
      clearTimeout(trailing.get(name));
      const timer = setTimeout(() => {
        trailing.delete(name);
        sendBack({ type: 'watch.change', name });
      }, CHOKIDAR_CHANGE_THROTTLE_MS + 10);
      trailing.set(name, timer);
    };
    watcher.on('all', (_event, path) => {
      if (path === paths.dir) {
        report('unknown');
        return;
      }
      const name = basename(path);
      if (dirname(path) === paths.dir && WATCHED.has(name)) {
        report(name as WatchedName);
      }
    });
    watcher.on('ready', () => sendBack({ type: 'watch.ready' }));
    watcher.on('error', (error) =>
      sendBack({ type: 'watch.error', message: error instanceof Error ? error.message : String(error) }),
    );
    return () => {
      for (const timer of trailing.values()) clearTimeout(timer);
      onClosed(watcher.close());
    };
  });
