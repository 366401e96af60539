/** The four protocol files under `.pulse/`, in the order PulseAgent scans them. */
export const PULSE_FILES = ['task.md', 'guidance.md', 'constraints.md', 'plan.md'] as const;

export type PulseFileName = (typeof PULSE_FILES)[number];

/** Files whose edits invalidate the agent's plan. */
export const INVALIDATING_PATHS: ReadonlySet<string> = new Set([
  '.pulse/guidance.md',
  '.pulse/constraints.md',
]);

export type EventKind = 'created' | 'modified' | 'deleted';

/** One line of `events.jsonl`, exactly as PulseAgent writes it. */
export interface PulseEvent {
  id: string;
  timestamp: string;
  kind: EventKind;
  path: string;
  sha256: string | null;
  size: number | null;
}

/** What the sidecar last knew about one protocol file. */
export interface TrackedFile {
  sha256: string | null;
  size: number | null;
  /** The decoded text, bounded; null when the file is absent. */
  text: string | null;
  /** True when `text` holds only the first part of the file. */
  truncated: boolean;
  /** Stat fingerprint, so a reconcile hashes only files whose stat changed; '' while too recent to trust. */
  fingerprint: string;
  /** When the file was last modified (ms since the epoch); null when absent. */
  mtimeMs: number | null;
}

export type TrackedFiles = Record<PulseFileName, TrackedFile>;

/** The acknowledgement state that `state.json` keeps. */
export interface AckRecord {
  eventId: string;
  planSha256: string | null;
  at: string;
}

export const eventPath = (name: PulseFileName): string => `.pulse/${name}`;

export const isInvalidating = (event: Pick<PulseEvent, 'path'>): boolean =>
  INVALIDATING_PATHS.has(event.path);

export const emptyFile = (): TrackedFile => ({
  sha256: null,
  size: null,
  text: null,
  truncated: false,
  fingerprint: '',
  mtimeMs: null,
});

export const untrackedFiles = (): TrackedFiles => ({
  'task.md': emptyFile(),
  'guidance.md': emptyFile(),
  'constraints.md': emptyFile(),
  'plan.md': emptyFile(),
});
