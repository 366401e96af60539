import { lstatSync, statSync } from 'node:fs';
import { pulse, shellWord } from './pulse-command.js';
import type { StatusReport } from './status.js';
import type { PulsePaths } from './store/paths.js';
import { ProjectFolderError } from './store/pulse-folder.js';
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

/**
 * Refuses a project folder that is not there (a typo) or has no `.pulse/` (pulse never ran
 * there), saying what to run.
 */
export const requirePulseFolder = (paths: PulsePaths): void => {
  const project = shellWord(paths.projectRoot);
  if (!statSync(paths.projectRoot, { throwIfNoEntry: false })?.isDirectory()) {
    throw new ProjectFolderError(
      `Project folder ${paths.projectRoot} does not exist. Check the path, or pass the project folder with -p DIR.`,
    );
  }
  if (lstatSync(paths.dir, { throwIfNoEntry: false }) === undefined) {
    throw new ProjectFolderError(
      `${paths.projectRoot} has no .pulse/ folder: pulse has never run there. Start it with \`${pulse(`start -p ${project}`)}\` (or create the files only: \`${pulse(`init -p ${project}`)}\`).`,
    );
  }
};
