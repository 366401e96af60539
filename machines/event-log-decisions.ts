import { errorMessage } from './error-message.js';
import type { EventLogContext, LoadedJournal, ReconcileOutput } from './event-log-context.js';
import { needsRecheck, unloggedReason, unsavedStateReason } from './log-faults.js';
import type { PlanSnapshot } from './plan-diff.js';
import type { ReplanRecord } from './replan-context.js';
import { answerOf, type ReplyOut } from './reply.js';

/*
 * What each of the event log's decisions does, as pure functions of its context: the log's
 * named actions apply them.
 */

/** No caller waits for a scan: each request counted in is answered. */
export const allAnswered = (context: EventLogContext): boolean =>
  context.scansCompleted >= context.scansRequested;

/** Something could not be read or written at the last scan: look again, and never skip a caller's scan. */
export const troubled = (context: EventLogContext): boolean =>
  needsRecheck(context.faults, context.hashesUnsaved);

/** A known file is missing within its replace window: a caller's request waits for the scan that resolves it. */
export const replacing = (context: EventLogContext): boolean => context.away.length > 0;

/**
 * Whether the idle scan answers a `log.reconcile` with its first branch: no scan, no count, no
 * new snapshot. `filesUnchanged` is the guard the wiring provides, asked last as the chart does.
 */
export const reconcileAnsweredAsIs = (context: EventLogContext, filesUnchanged: () => boolean): boolean =>
  !troubled(context) && !replacing(context) && allAnswered(context) && filesUnchanged();

/** Keeps only the latest record to write; it answers every ack queued before it. */
export const ackQueued = (context: EventLogContext, record: ReplanRecord): Partial<EventLogContext> => ({
  queuedAck: {
    ack: record.ack,
    agents: record.agents,
    acks: record.acks,
    answers: [...(context.queuedAck?.answers ?? []), ...(record.answers === null ? [] : [record.answers])],
  },
});

/** Takes the queued record as the one being written. */
export const queuedAckTaken = (context: EventLogContext): Partial<EventLogContext> => ({
  ack: context.queuedAck?.ack ?? context.ack,
  agents: context.queuedAck?.agents ?? context.agents,
  acks: context.queuedAck?.acks ?? context.acks,
  savingAnswers: context.queuedAck?.answers ?? [],
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

/** A decision of the ack writer: what changes in its context, and the answers to the acks its write ended. */
export interface AckWriteDecision {
  changes: Partial<EventLogContext>;
  replies: ReplyOut[];
}

/** The record being written reached state.json: each ack it answers is durable. */
export const ackSaved = (context: EventLogContext): AckWriteDecision => ({
  changes: { savingAnswers: [], hashesUnsaved: false, faults: { ...context.faults, state: null } },
  replies: context.savingAnswers.map(({ asking, reply }) => answerOf(asking, { ...reply, durable: true })),
});

/**
 * The record being written could not reach state.json: each ack it answers is accepted in memory,
 * written again until it lands, and said so.
 */
export const ackFailed = (context: EventLogContext, error: unknown): AckWriteDecision => {
  const message = errorMessage(error);
  const warning = `Accepted, but not yet written to .pulse/state.json (${message}): pulse keeps the ack in memory and writes it as soon as it can; do not ack again. Until then a restart of pulse would ask for this replan once more.`;
  return {
    changes: { savingAnswers: [], faults: { ...context.faults, state: unsavedStateReason(message) } },
    replies: context.savingAnswers.map(({ asking, reply }) =>
      answerOf(asking, { ...reply, durable: false, warning }),
    ),
  };
};

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
