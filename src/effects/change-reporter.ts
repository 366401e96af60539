import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { WatchedName } from '../../machines/watcher-context.js';

/** Notices for a name within this long after it was reported are reported once more, when it ends. */
export const REPORT_WINDOW_MS = 50;
/**
 * A file that has just disappeared is reported this much later, so that the scan after a save by
 * rename (vim moving the original aside, then writing the new file) mostly finds the new one in
 * place; whether it was a deletion is the log's to decide (its replace window).
 */
export const ATOMIC_SAVE_MS = 100;

/** Turns raw notices for the names pulse owns into reports; `stop` cancels what is still due. */
export interface ChangeReporter {
  notice(name: WatchedName): void;
  stop(): void;
}

/**
 * Reports the first notice for a name at once and folds the notices that follow within
 * `REPORT_WINDOW_MS` into one more report when the window ends, so the last write of a burst is
 * always reported and a burst costs two reports. The event log hashes, so an extra is cheap.
 */
export const createChangeReporter = (dir: string, report: (name: WatchedName) => void): ChangeReporter => {
  const windows = new Map<WatchedName, { again: boolean; timer: NodeJS.Timeout }>();
  const held = new Map<WatchedName, NodeJS.Timeout>();
  const now = (name: WatchedName) => {
    const open = windows.get(name);
    if (open !== undefined) {
      open.again = true;
      return;
    }
    report(name);
    const window = {
      again: false,
      timer: setTimeout(() => {
        windows.delete(name);
        if (window.again) now(name);
      }, REPORT_WINDOW_MS),
    };
    windows.set(name, window);
  };
  return {
    notice(name) {
      clearTimeout(held.get(name));
      held.delete(name);
      if (name !== 'unknown' && !existsSync(join(dir, name))) {
        // Nothing due in between may look at the file while it is away.
        const open = windows.get(name);
        if (open !== undefined) open.again = false;
        held.set(
          name,
          setTimeout(() => {
            held.delete(name);
            now(name);
          }, ATOMIC_SAVE_MS),
        );
        return;
      }
      now(name);
    },
    stop() {
      for (const { timer } of windows.values()) clearTimeout(timer);
      for (const timer of held.values()) clearTimeout(timer);
      windows.clear();
      held.clear();
    },
  };
};
