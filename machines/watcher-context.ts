import { PULSE_FILES, type PulseFileName } from './pulse-files.js';

/** The external sources config, also under `.pulse/`. */
export const SOURCES_FILE = 'sources.json';
/** The user's focus (quiet until a time), also under `.pulse/`. */
export const FOCUS_FILE = 'focus.json';
/** Every file under `.pulse/` whose edits pulse acts on: the only names the watch reports. */
export const WATCHED_FILES = [...PULSE_FILES, SOURCES_FILE, FOCUS_FILE] as const;

/** The names the file-watching effect reports. */
export type WatchedName = PulseFileName | typeof SOURCES_FILE | typeof FOCUS_FILE | 'unknown';

/** What the file-watching and file-polling effects report to the watcher. */
export type WatchReport =
  | { type: 'watch.ready' }
  | { type: 'watch.change'; name: WatchedName }
  | { type: 'watch.error'; message: string };

/** The first wait before the watch is tried again after it failed; each failure in a row doubles it. */
export const RETRY_FIRST_MS = 1_000;
/** The longest wait between two tries of the watch. */
export const RETRY_MAX_MS = 30_000;

/** How long the watcher polls before it tries the watch again, after `failures` failed tries in a row. */
export const watchRetryDelayMs = (failures: number): number =>
  Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.max(0, failures - 1));

export interface WatcherContext {
  lastError: string | null;
  errorCount: number;
  changesSeen: number;
  /** Why changes are only polled (the watch failed); null while the watch works. */
  down: string | null;
  /** Failed tries of the watch since it last worked. */
  failures: number;
}
