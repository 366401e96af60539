import { errorMessage } from '../../machines/error-message.js';
import type { ReconcileInput, ReconcileOutput } from '../../machines/event-log-context.js';
import {
  type EventKind,
  eventPath,
  PULSE_FILES,
  type PulseEvent,
  type PulseFileName,
  type TrackedFile,
  type TrackedFiles,
} from '../../machines/pulse-files.js';
import type { EventStamper } from '../store/event-id.js';
import { appendEvents } from '../store/event-log-file.js';
import type { PulsePaths } from '../store/paths.js';
import { createTrackedFileReader, isUnchanged, TrackedFileError } from '../store/read-tracked-file.js';
import { folderProblem } from '../store/real-folder.js';
import type { StateFile } from '../store/state-file.js';

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
 * Whether a scan now would find nothing to read: `.pulse/` is still a real folder and each of
 * the four files' stat still matches what the log recorded. Five synchronous stats, so a tool
 * call on still files skips the scan's round trip; a file changed within the racy window never
 * matches.
 */
export const filesUnchanged = (paths: PulsePaths, files: TrackedFiles): boolean =>
  folderProblem(paths.dir) === null &&
  PULSE_FILES.every((name) => isUnchanged(paths.file(name), files[name]));

type ReadOutcome = { file: TrackedFile } | { problem: string };

/**
 * The four reads (in PULSE_FILES order) against what the log knew: one event per changed file,
 * stamped in that fixed order; a file it could not read, one changed too freshly to trust on a
 * watcher's hint, or a known one missing within its replace window (`away`, not in `gone`) keeps
 * what was known of it.
 */
const compare = (
  files: TrackedFiles,
  outcomes: ReadOutcome[],
  {
    requested,
    gone,
    startedAt,
    stamp,
  }: {
    requested: boolean;
    gone: readonly PulseFileName[];
    startedAt: number;
    stamp: EventStamper['next'];
  },
) => {
  const next = { ...files } as TrackedFiles;
  const events: PulseEvent[] = [];
  const unreadable: ReconcileOutput['unreadable'] = {};
  const away: PulseFileName[] = [];
  let deferred = false;
  for (const [i, name] of PULSE_FILES.entries()) {
    const outcome = outcomes[i]!;
    if ('problem' in outcome) {
      unreadable[name] = outcome.problem;
      continue;
    }
    const current = outcome.file;
    const kind = kindOf(files[name].sha256, current.sha256);
    // Missing between an editor's two renames, or deleted: only the end of its window tells.
    if (kind === 'deleted' && !gone.includes(name)) {
      away.push(name);
      continue;
    }
    if (
      kind !== null &&
      !requested &&
      current.mtimeMs !== null &&
      startedAt - current.mtimeMs < FRESH_CHANGE_MS
    ) {
      deferred = true;
      continue;
    }
    next[name] = current;
    if (kind === null) continue;
    events.push({ ...stamp(), kind, path: eventPath(name), sha256: current.sha256, size: current.size });
  }
  return { next, events, unreadable, away, deferred };
};

/**
 * Compares the four files with what the log last recorded, appends one event per changed
 * file (fsynced) and then records the new hashes in state.json. A scan on request (a tool
 * call: read-your-writes) logs every change it sees; a scan on a watcher hint defers changes
 * too fresh to trust. A known file found missing is reported `away` and logged `deleted` only
 * once the log says its replace window ran out (`gone`). Each file stands alone: one it cannot read is reported and keeps what
 * was known of it, the others are logged. Nothing is read or written while `.pulse/` is not a
 * real folder; a failed append logs nothing (the next scan tries again), a failed state write
 * is reported and tried again when asked.
 */
export const createReconciler = ({
  paths,
  stamper,
  stateFile,
  now = Date.now,
}: {
  paths: PulsePaths;
  stamper: EventStamper;
  stateFile: StateFile;
  now?: () => number;
}) => {
  const read = createTrackedFileReader();
  const readOne = (name: PulseFileName, previous: TrackedFile): Promise<ReadOutcome> =>
    read(paths.file(name), previous).then(
      (file) => ({ file }),
      (error: unknown) => {
        if (error instanceof TrackedFileError) return { problem: error.reason };
        throw error;
      },
    );
  return async ({ files, requested, saveHashes, gone }: ReconcileInput): Promise<ReconcileOutput> => {
    const quiet = {
      events: [],
      deferred: false,
      unreadable: {},
      away: [],
      hashesSaved: null,
      stateError: null,
    };
    const folder = folderProblem(paths.dir);
    if (folder !== null) return { ...quiet, files, folder, appendError: null };
    // Freshness is judged as of the scan's start: a slow read (a loaded machine) must not make a
    // save caught between its truncate and its write look old enough to log.
    const startedAt = now();
    const outcomes = await Promise.all(PULSE_FILES.map((name) => readOne(name, files[name])));
    const { next, events, unreadable, away, deferred } = compare(files, outcomes, {
      requested,
      gone,
      startedAt,
      stamp: () => stamper.next(),
    });
    if (events.length > 0) {
      try {
        await appendEvents(paths.events, events);
      } catch (error) {
        // Swapped for a symlink since the scan began: say so, not that the disk is full.
        const swapped = folderProblem(paths.dir);
        if (swapped !== null)
          return { ...quiet, files, unreadable, away, folder: swapped, appendError: null };
        return { ...quiet, files, unreadable, away, folder: null, appendError: errorMessage(error) };
      }
    }
    const scanned = { files: next, events, deferred, unreadable, away, folder: null, appendError: null };
    if (events.length === 0 && !saveHashes) return { ...scanned, hashesSaved: null, stateError: null };
    const hashes: Record<string, string | null> = {};
    for (const name of PULSE_FILES) hashes[name] = next[name].sha256;
    const stateError = await stateFile.setHashes(hashes).then(
      () => null,
      (error: unknown) => errorMessage(error),
    );
    return { ...scanned, hashesSaved: stateError === null, stateError };
  };
};
