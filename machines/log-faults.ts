import { eventPath, INVALIDATING_PATHS, PULSE_FILES, type PulseFileName } from './pulse-files.js';

/** One thing pulse cannot see or record now: the file (or `.pulse/`), and a reason that completes "<file> …". */
export interface FileFault {
  file: string;
  reason: string;
}

/** What the event log cannot see or record, as its last scan and write found it; all null/empty when all is well. */
export interface LogFaults {
  /** `.pulse/` is not a real folder (missing, a symlink): nothing is read or written. */
  folder: string | null;
  /** Protocol files the last scan could not read; what pulse knew of each is kept. */
  unreadable: Partial<Record<PulseFileName, string>>;
  /** The last append to `events.jsonl` failed: a change was seen but could not be logged. */
  append: string | null;
  /** `state.json` could not be written: the hashes and the last ack are kept in memory until it can. */
  state: string | null;
}

export const NO_FAULTS: LogFaults = { folder: null, unreadable: {}, append: null, state: null };

export const FOLDER_PATH = '.pulse/';
export const EVENTS_PATH = '.pulse/events.jsonl';
export const STATE_PATH = '.pulse/state.json';

/** Why state.json is behind: what failed, what pulse does meanwhile, what the user can do. */
export const unsavedStateReason = (error: string): string =>
  `cannot be written (${error}): the last ack and the file hashes are kept in memory and written as soon as it can; free space on its disk or make it writable`;

/** Why a change could not be logged: what failed, and what the user can do. */
export const unloggedReason = (error: string): string =>
  `cannot be appended to (${error}): changes are seen but not logged, and pulse tries again every second; make it a writable regular file with free space on its disk`;

/** Every fault, `.pulse/` first, then the four files in PulseAgent's order, then the log and the state. */
export const faultList = (faults: LogFaults): FileFault[] => {
  const unreadable = PULSE_FILES.filter((name) => faults.unreadable[name] !== undefined);
  // The common case, read by every tool call: nothing to list, nothing more to build.
  if (faults.folder === null && unreadable.length === 0 && faults.append === null && faults.state === null)
    return [];
  return [
    ...(faults.folder === null ? [] : [{ file: FOLDER_PATH, reason: faults.folder }]),
    ...unreadable.map((name) => ({ file: eventPath(name), reason: faults.unreadable[name]! })),
    ...(faults.append === null ? [] : [{ file: EVENTS_PATH, reason: faults.append }]),
    ...(faults.state === null ? [] : [{ file: STATE_PATH, reason: faults.state }]),
  ];
};

/**
 * How long a tracked file may be missing before its absence is logged as `deleted`: an editor's
 * safe write (JetBrains, vim, `sed -i`) leaves it missing for a moment between two renames, and a
 * file back within this window is one `modified` (or nothing), never a deletion and a creation.
 */
export const REPLACE_WINDOW_MS = 500;

/** Why a guidance or constraints file missing for a moment holds the plan: the new one is on its way. */
export const REPLACING_REASON = `is being replaced (missing for a moment, as an editor's safe write leaves it): pulse waits up to ${REPLACE_WINDOW_MS} ms for the new file before it logs a deletion; nothing to fix, ask again in a moment`;

/**
 * The faults that may hide a guidance or constraints change from the log: `.pulse/` itself, an
 * unreadable guidance.md or constraints.md, a log that cannot be appended to, and guidance.md or
 * constraints.md missing within the replace window (`away`). While any holds, pulse fails closed
 * and treats the plan as on hold.
 */
export const blindSpots = (faults: LogFaults, away: readonly PulseFileName[]): FileFault[] => {
  const replacing = PULSE_FILES.filter((name) => away.includes(name)).map((name) => ({
    file: eventPath(name),
    reason: REPLACING_REASON,
  }));
  return [...faultList(faults), ...replacing].filter(
    ({ file }) => file === FOLDER_PATH || file === EVENTS_PATH || INVALIDATING_PATHS.has(file),
  );
};

/** Whether a scan should come again soon without being asked: something could not be read or written. */
export const needsRecheck = (faults: LogFaults, hashesUnsaved: boolean): boolean =>
  faults.folder !== null ||
  Object.keys(faults.unreadable).length > 0 ||
  faults.append !== null ||
  hashesUnsaved;

/** The same faults in the same order: whether a change of faults is news. */
export const sameFaults = (a: readonly FileFault[], b: readonly FileFault[]): boolean =>
  a.length === b.length && a.every((fault, i) => fault.file === b[i]!.file && fault.reason === b[i]!.reason);
