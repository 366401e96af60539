import { EventIndex } from './event-index.js';
import { type FileFault, type LogFaults, NO_FAULTS } from './log-faults.js';
import type { PlanSnapshot } from './plan-diff.js';
import {
  type AckRecord,
  type PulseEvent,
  type PulseFileName,
  type TrackedFiles,
  untrackedFiles,
} from './pulse-files.js';
import type { ReplanAck } from './replan-acks.js';
import type { SavedAgent } from './replan-agents.js';
import type { AckToAnswer, ReplanRecord } from './replan-context.js';

/** What the event log reads once at start. */
export interface LoadedJournal {
  index: EventIndex;
  ack: AckRecord | null;
  /** The agents state.json kept; [] when it kept none (PulseAgent's, or ours before agents). */
  agents: SavedAgent[];
  /** The acks with their replans state.json kept; [] when none. */
  acks: ReplanAck[];
  /** plan.md as it is at load (read whole, unlike `files`, which only knows hashes until the first scan). */
  plan: PlanSnapshot;
  /** When it was loaded (ms since the epoch): restored agents count as heard then. */
  loadedAt: number;
  /** Last known state of each file: the log's last event for it, else `state.json`'s hash. */
  files: TrackedFiles;
  /** Repairs and recoveries made while loading, to show the user. */
  warnings: string[];
}

export interface ReconcileInput {
  files: TrackedFiles;
  /** Asked for by a caller (read-your-writes): log what is there, however fresh. */
  requested: boolean;
  /** A write of the hashes failed before: write them again, even with nothing new to log. */
  saveHashes: boolean;
  /** Known files whose replace window ran out: a deletion is logged for each one still missing. */
  gone: readonly PulseFileName[];
}

/** The files as they are now, and the events appended to `events.jsonl` for what changed. */
export interface ReconcileOutput {
  files: TrackedFiles;
  events: PulseEvent[];
  /** A change was too fresh to log on a watcher hint; scan again after the debounce delay. */
  deferred: boolean;
  /** `.pulse/` was not a real folder, and why: nothing was read or written. */
  folder: string | null;
  /** The files that could not be read, and why; `files` keeps what was known of them. */
  unreadable: Partial<Record<PulseFileName, string>>;
  /** Known files found missing within their replace window: no event yet, `files` keeps what was known of each. */
  away: PulseFileName[];
  /** Why the append failed; it was cut back, `events` is empty and `files` as given, so a retry logs each change once. */
  appendError: string | null;
  /** Whether state.json got the hashes: null when nothing was written. */
  hashesSaved: boolean | null;
  /** Why state.json could not be written, when `hashesSaved` is false. */
  stateError: string | null;
}

/** What the event log writes to state.json for the replan lifecycle: the last ack and the agents. */
export interface SaveReplanInput {
  ack: AckRecord | null;
  agents: SavedAgent[];
  acks: ReplanAck[];
}

export interface EventLogContext {
  index: EventIndex;
  files: TrackedFiles;
  /** The durable ack, as `state.json` holds it. */
  ack: AckRecord | null;
  /** The agents and what each owes, as `state.json` holds them (beside PulseAgent's fields). */
  agents: SavedAgent[];
  /** The latest acks with their replans, as `state.json` holds them. */
  acks: ReplanAck[];
  /** When the journal was loaded. */
  loadedAt: number;
  /** Reconcile requests counted in; a caller waits until `scansCompleted` reaches its number. */
  scansRequested: number;
  scanStartedAt: number;
  scansCompleted: number;
  rescan: boolean;
  /** A caller asked for a scan that has not started yet. */
  callerAsked: boolean;
  /** The running scan was asked for by a caller. */
  scanForCaller: boolean;
  deferred: boolean;
  /** The latest record to write, with every accepted ack it answers once written. */
  queuedAck: (SaveReplanInput & { answers: AckToAnswer[] }) | null;
  /** The accepted acks the write in progress answers when it ends. */
  savingAnswers: AckToAnswer[];
  lastError: string | null;
  warnings: string[];
  /** What pulse cannot see or record now (an unreadable file, `.pulse/` swapped, a full disk). */
  faults: LogFaults;
  /** The last hashes written to state.json did not reach the disk. */
  hashesUnsaved: boolean;
  /** The faults hiding guidance/constraints changes, as last told to the replan lifecycle. */
  announcedBlind: FileFault[];
  /** Known files the last scan found missing, within their replace window: a save by rename may bring them back. */
  away: PulseFileName[];
  /** Files whose replace window ran out: the next scan logs the deletion of each one still missing. */
  gone: PulseFileName[];
  /** The `gone` files the running scan was given. */
  scanGone: PulseFileName[];
}

export type EventLogEvent =
  | { type: 'file.changed'; name: PulseFileName | 'unknown' }
  | { type: 'log.reconcile' }
  | ReplanRecord;

/** Told to the replan lifecycle after new events reached `events.jsonl`, with plan.md as that scan found it. */
export interface LogAppended {
  type: 'log.appended';
  events: PulseEvent[];
  plan: PlanSnapshot;
}

/** Told to the replan lifecycle when what may hide a guidance/constraints change differs from the last time. */
export interface LogFaultsChanged {
  type: 'log.faults';
  blind: FileFault[];
}

/** The event log's context at start: nothing loaded, and a caller's scan asked for. */
export const initialEventLogContext = (): EventLogContext => ({
  index: EventIndex.empty(),
  files: untrackedFiles(),
  ack: null,
  agents: [],
  acks: [],
  loadedAt: 0,
  scansRequested: 1,
  scanStartedAt: 0,
  scansCompleted: 0,
  rescan: false,
  callerAsked: true,
  scanForCaller: false,
  deferred: false,
  queuedAck: null,
  savingAnswers: [],
  lastError: null,
  warnings: [],
  faults: NO_FAULTS,
  hashesUnsaved: false,
  announcedBlind: [],
  away: [],
  gone: [],
  scanGone: [],
});
