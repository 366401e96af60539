import { lstatSync } from 'node:fs';
import type { StatusReport } from './status.js';
import type { PulsePaths } from './store/paths.js';
import { folderProblem } from './store/real-folder.js';

/**
 * `pulse status` for a `.pulse/` that is a symlink or no folder: nothing is read through it, the
 * report says what is wrong (null when the folder is usable, or not there at all).
 */
export const unusableFolder = (paths: PulsePaths): StatusReport | null => {
  const reason = folderProblem(paths.dir);
  if (reason === null || lstatSync(paths.dir, { throwIfNoEntry: false }) === undefined) return null;
  return {
    project: paths.projectRoot,
    daemon: { running: false, url: null, pid: null, version: null },
    needs_replan: true,
    pending_replan_event_id: null,
    pending_replan_files: [],
    latest_event_id: null,
    events: 0,
    last_acknowledged_event_id: null,
    last_acknowledged_plan_sha256: null,
    last_acknowledged_at: null,
    warnings: [],
    unobservable: [{ file: '.pulse/', reason }],
    dead_letters: [],
  };
};
