import type { ReconcileInput, ReconcileOutput } from '../../machines/event-log.js';
import {
  type EventKind,
  eventPath,
  PULSE_FILES,
  type PulseEvent,
  type TrackedFiles,
} from '../../machines/pulse-files.js';
import type { EventStamper } from '../store/event-id.js';
import { appendEvents } from '../store/event-log-file.js';
import type { PulsePaths } from '../store/paths.js';
import type { StateFile } from '../store/state-file.js';
import { isUnchanged, readTrackedFile } from './read-tracked-file.js';

const kindOf = (before: string | null, after: string | null): EventKind | null => {
  if (before === after) return null;
  if (before === null) return 'created';
  if (after === null) return 'deleted';
  return 'modified';
};

/**
 * A change younger than this, seen by a watcher-triggered scan, may be a save caught between
 * its truncate and its write: it is looked at again after the next settle instead of logged.
 * Editors write both within a millisecond; a writer pausing longer between them than this and
 * the log's settle delay (20 ms each) gets two events. Longer guards cost every push their length.
 */
export const FRESH_CHANGE_MS = 20;

/**
 * Whether a scan now would find nothing to read: each of the four files' stat still matches what
 * the log recorded. Four synchronous stats, so a tool call on still files skips the scan's round
 * trip; a file changed within the racy window never matches.
 */
export const filesUnchanged = (paths: PulsePaths, files: TrackedFiles): boolean =>
  PULSE_FILES.every((name) => isUnchanged(paths.file(name), files[name]));

/**
 * Compares the four files with what the log last recorded, appends one event per changed
 * file (fsynced) and then records the new hashes in state.json. A scan on request (a tool
 * call: read-your-writes) logs every change it sees; a scan on a watcher hint defers changes
 * too fresh to trust.
 */
export const createReconciler =
  ({
    paths,
    stamper,
    stateFile,
    now = Date.now,
  }: {
    paths: PulsePaths;
    stamper: EventStamper;
    stateFile: StateFile;
    now?: () => number;
  }) =>
  async ({ files, requested }: ReconcileInput): Promise<ReconcileOutput> => {
    const next = { ...files } as TrackedFiles;
    const events: PulseEvent[] = [];
    let deferred = false;
    // Read side by side; events are still stamped in the files' fixed order.
    const read = await Promise.all(PULSE_FILES.map((name) => readTrackedFile(paths.file(name), files[name])));
    for (const [i, name] of PULSE_FILES.entries()) {
      const current = read[i]!;
      const kind = kindOf(files[name].sha256, current.sha256);
      if (
        kind !== null &&
        !requested &&
        current.mtimeMs !== null &&
        now() - current.mtimeMs < FRESH_CHANGE_MS
      ) {
        deferred = true;
        continue;
      }
      next[name] = current;
      if (kind === null) continue;
      events.push({
        ...stamper.next(),
        kind,
        path: eventPath(name),
        sha256: current.sha256,
        size: current.size,
      });
    }
    if (events.length > 0) {
      await appendEvents(paths.events, events);
      const hashes: Record<string, string | null> = {};
      for (const name of PULSE_FILES) hashes[name] = next[name].sha256;
      await stateFile.setHashes(hashes);
    }
    return { files: next, events, deferred };
  };
