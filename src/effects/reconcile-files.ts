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
import { readTrackedFile } from './read-tracked-file.js';

const kindOf = (before: string | null, after: string | null): EventKind | null => {
  if (before === after) return null;
  if (before === null) return 'created';
  if (after === null) return 'deleted';
  return 'modified';
};

/**
 * Compares the four files with what the log last recorded, appends one event per changed
 * file (fsynced) and then records the new hashes in state.json.
 */
export const createReconciler =
  ({ paths, stamper, stateFile }: { paths: PulsePaths; stamper: EventStamper; stateFile: StateFile }) =>
  async ({ files }: ReconcileInput): Promise<ReconcileOutput> => {
    const next = { ...files } as TrackedFiles;
    const events: PulseEvent[] = [];
    for (const name of PULSE_FILES) {
      const now = await readTrackedFile(paths.file(name), files[name]);
      next[name] = now;
      const kind = kindOf(files[name].sha256, now.sha256);
      if (kind === null) continue;
      events.push({ ...stamper.next(), kind, path: eventPath(name), sha256: now.sha256, size: now.size });
    }
    if (events.length > 0) {
      await appendEvents(paths.events, events);
      const hashes: Record<string, string | null> = {};
      for (const name of PULSE_FILES) hashes[name] = next[name].sha256;
      await stateFile.setHashes(hashes);
    }
    return { files: next, events };
  };
