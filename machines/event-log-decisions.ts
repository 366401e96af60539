import { errorMessage } from './error-message.js';
import type { EventLogContext, LoadedJournal, ReconcileOutput } from './event-log-context.js';
import { unloggedReason, unsavedStateReason } from './log-faults.js';
import type { PlanSnapshot } from './plan-diff.js';
import type { ReplanRecord } from './replan-context.js';

/*
 * What each of the event log's decisions does, as pure functions of its context: the log's
 * named actions apply them.
 */

/** Keeps only the latest record to write; it answers every ack queued before it. */
export const ackQueued = (context: EventLogContext, record: ReplanRecord): Partial<EventLogContext> => ({
  queuedAck: {
    ack: record.ack,
    agents: record.agents,
    acks: record.acks,
    requestId: Math.max(record.requestId, context.queuedAck?.requestId ?? 0),
  },
});

/** Takes the queued record as the one being written. */
export const queuedAckTaken = (context: EventLogContext): Partial<EventLogContext> => ({
  ack: context.queuedAck?.ack ?? context.ack,
  agents: context.queuedAck?.agents ?? context.agents,
  acks: context.queuedAck?.acks ?? context.acks,
  savingAckRequestId: Math.max(context.queuedAck?.requestId ?? 0, context.savingAckRequestId),
  queuedAck: null,
});

/** What one scan changes: the index, the files, and what could not be read or written. */
export const scanRecorded = (
  context: EventLogContext,
  output: ReconcileOutput,
): Partial<EventLogContext> => ({
  index: context.index.appended(output.events),
  files: output.files,
  deferred: output.deferred,
  away: output.away,
  scanGone: [],
  // A file missing within its window is not the truth yet: callers wait for the scan that resolves it,
  // which logs what it finds however fresh (their request carries over).
  scansCompleted: output.away.length === 0 ? context.scanStartedAt : context.scansCompleted,
  callerAsked: context.callerAsked || (output.away.length > 0 && context.scanForCaller),
  lastError: null,
  hashesUnsaved: output.hashesSaved === null ? context.hashesUnsaved : !output.hashesSaved,
  faults: {
    folder: output.folder,
    unreadable: output.unreadable,
    append: output.appendError === null ? null : unloggedReason(output.appendError),
    // Every write of state.json writes all of it: one that got through made the last ack durable too.
    state:
      output.hashesSaved === null
        ? context.faults.state
        : output.hashesSaved
          ? null
          : unsavedStateReason(output.stateError ?? 'unknown error'),
  },
});

/** What a scan that threw changes: its error, and the deletions it was given are due again. */
export const scanFailed = (context: EventLogContext, error: unknown): Partial<EventLogContext> => ({
  lastError: `Could not reconcile .pulse/: ${errorMessage(error)}`,
  deferred: false,
  scansCompleted: context.scanStartedAt,
  gone: [...context.scanGone, ...context.gone.filter((name) => !context.scanGone.includes(name))],
  scanGone: [],
});

/** The record being written reached state.json. */
export const ackSaved = (context: EventLogContext): Partial<EventLogContext> => ({
  ackSavedRequestId: context.savingAckRequestId,
  ackError: null,
  hashesUnsaved: false,
  faults: { ...context.faults, state: null },
});

/** The record being written could not reach state.json. */
export const ackFailed = (context: EventLogContext, error: unknown): Partial<EventLogContext> => ({
  ackError: { requestId: context.savingAckRequestId, message: errorMessage(error) },
  faults: {
    ...context.faults,
    state: unsavedStateReason(errorMessage(error)),
  },
});

/** What the replan lifecycle is told once the journal is loaded. */
export const restored = (context: EventLogContext, plan: PlanSnapshot) => ({
  type: 'replan.restored' as const,
  pending: context.index.pendingAfter(context.ack?.eventId ?? null),
  lastAck: context.ack,
  agents: context.agents,
  at: context.loadedAt,
  plan,
  acks: context.acks,
});

/** What the log keeps of the journal it loaded. */
export const journalRestored = ({
  index,
  files,
  ack,
  agents,
  acks,
  loadedAt,
  warnings,
}: LoadedJournal): Partial<EventLogContext> => ({ index, files, ack, agents, acks, loadedAt, warnings });

/** A scan starts: it answers every request counted so far and takes the deletions that are due. */
export const scanStarted = (context: EventLogContext): Partial<EventLogContext> => ({
  scanStartedAt: context.scansRequested,
  rescan: false,
  scanForCaller: context.callerAsked,
  callerAsked: false,
  scanGone: context.gone,
  gone: [],
});
