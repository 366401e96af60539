import { EventIndex } from '../../machines/event-index.js';
import type { LoadedJournal } from '../../machines/event-log-context.js';
import { planSnapshot, UNKNOWN_PLAN } from '../../machines/plan-diff.js';
import { emptyFile, eventPath, PULSE_FILES, type TrackedFiles } from '../../machines/pulse-files.js';
import type { EventStamper } from '../store/event-id.js';
import { readEventBacklog } from '../store/event-log-file.js';
import type { PulsePaths } from '../store/paths.js';
import { readTrackedFile } from '../store/read-tracked-file.js';
import type { LoadedState } from '../store/state-file.js';

/**
 * Reads the log once and works out what the sidecar last knew of each file: the log's last
 * event for it wins over state.json (the log is written first, so it is never behind).
 */
export const createJournalLoader =
  ({ paths, stamper, state }: { paths: PulsePaths; stamper: EventStamper; state: LoadedState }) =>
  async (): Promise<LoadedJournal> => {
    const { backlog, warnings } = await readEventBacklog(paths.events);
    const index = EventIndex.loaded(backlog);
    const latest = index.latest;
    if (latest) stamper.observe(latest.id);
    const files = {} as TrackedFiles;
    for (const name of PULSE_FILES) {
      const last = index.lastFor(eventPath(name));
      if (last || name in state.lastHashes) {
        files[name] = { ...emptyFile(), sha256: last ? last.sha256 : (state.lastHashes[name] ?? null) };
      } else {
        // No baseline at all (state.json was lost): take the file as it is, as a first start does,
        // rather than log an unchanged file as created (and raise a replan for it). One that cannot
        // be read starts absent: the first scan reports it, and logs it once it can be read.
        files[name] = await readTrackedFile(paths.file(name), emptyFile()).catch(() => emptyFile());
      }
    }
    // What an agent that owes a change across the restart is held against (the plan at the change died with the old process).
    const plan = await readTrackedFile(paths.file('plan.md'), emptyFile()).then(
      planSnapshot,
      () => UNKNOWN_PLAN,
    );
    return {
      index,
      plan,
      ack: state.ack,
      agents: state.agents,
      acks: state.acks,
      loadedAt: Date.now(),
      files,
      warnings: [...state.warnings, ...warnings],
    };
  };
