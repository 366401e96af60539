import { assign, enqueueActions, fromPromise, sendTo, setup } from 'xstate';
import { errorMessage } from './error-message.js';
import { EventIndex } from './event-index.js';
import {
  type AckRecord,
  type PulseEvent,
  type PulseFileName,
  type TrackedFiles,
  untrackedFiles,
} from './pulse-files.js';

/** What the log owner reads once at start. */
export interface LoadedJournal {
  index: EventIndex;
  ack: AckRecord | null;
  /** Last known state of each file: the log's last event for it, else `state.json`'s hash. */
  files: TrackedFiles;
  /** Repairs and recoveries made while loading, to show the user. */
  warnings: string[];
}

export interface ReconcileInput {
  files: TrackedFiles;
  /** Asked for by a caller (read-your-writes): log what is there, however fresh. */
  requested: boolean;
}

/** The files as they are now, and the events appended to `events.jsonl` for what changed. */
export interface ReconcileOutput {
  files: TrackedFiles;
  events: PulseEvent[];
  /** A change was too fresh to log on a watcher hint; scan again after the settle delay. */
  deferred: boolean;
}

export interface SaveAckInput {
  ack: AckRecord;
}

export interface EventLogContext {
  index: EventIndex;
  files: TrackedFiles;
  /** The durable ack, as `state.json` holds it. */
  ack: AckRecord | null;
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
  queuedAck: { ack: AckRecord; requestId: number } | null;
  savingAckRequestId: number;
  ackSavedRequestId: number;
  ackError: { requestId: number; message: string } | null;
  lastError: string | null;
  warnings: string[];
}

export type EventLogEvent =
  | { type: 'file.changed'; name: PulseFileName | 'unknown' }
  | { type: 'log.reconcile' }
  | { type: 'ack.record'; ack: AckRecord; requestId: number };

/** Told to the replan lifecycle after new events reached `events.jsonl`. */
export interface LogAppended {
  type: 'log.appended';
  events: PulseEvent[];
}

/**
 * The owner of `events.jsonl` and `state.json`: the only writer of both, so one change yields
 * one event. Keeps the index in memory; reconciles on a watcher hint or on request.
 */
export const eventLogMachine = setup({
  types: {
    context: {} as EventLogContext,
    events: {} as EventLogEvent,
  },
  actors: {
    loadJournal: fromPromise<LoadedJournal>(async () => {
      throw new Error('loadJournal not provided');
    }),
    reconcileFiles: fromPromise<ReconcileOutput, ReconcileInput>(async () => {
      throw new Error('reconcileFiles not provided');
    }),
    saveAck: fromPromise<void, SaveAckInput>(async () => {
      throw new Error('saveAck not provided');
    }),
  },
  delays: {
    /**
     * Lets a burst of watcher notices (an atomic save, an editor's backup dance) settle into one
     * scan. Not shorter than the reconciler's FRESH_CHANGE_MS (20 ms), so a single write is
     * old enough to log at the first scan after its notice.
     */
    settle: 20,
  },
  guards: {
    /**
     * A caller's scan would find nothing: every file's stat still matches what the last scan
     * recorded. The wiring provides a synchronous stat check (read-only); without it, every
     * request scans.
     */
    filesUnchanged: (_: { context: EventLogContext }) => false,
    rescanNeeded: ({ context }) => context.rescan,
    deferred: ({ context }) => context.deferred,
    ackQueued: ({ context }) => context.queuedAck !== null,
  },
  actions: {
    countRequest: assign(({ context }) => ({ scansRequested: context.scansRequested + 1 })),
    /** Answers a caller's request at once, as a scan that started now and found nothing. */
    countRequestAnswered: assign(({ context }) => ({
      scansRequested: context.scansRequested + 1,
      scansCompleted: context.scansRequested + 1,
    })),
    markCallerAsked: assign({ callerAsked: true }),
    markRescan: assign({ rescan: true }),
    startScan: assign(({ context }) => ({
      scanStartedAt: context.scansRequested,
      rescan: false,
      scanForCaller: context.callerAsked,
      callerAsked: false,
    })),
    queueAck: assign(({ event }) =>
      event.type === 'ack.record' ? { queuedAck: { ack: event.ack, requestId: event.requestId } } : {},
    ),
    takeQueuedAck: assign(({ context }) => ({
      ack: context.queuedAck?.ack ?? context.ack,
      savingAckRequestId: context.queuedAck?.requestId ?? context.savingAckRequestId,
      queuedAck: null,
    })),
    announceRestored: sendTo(
      ({ system }) => system.get('replan'),
      ({ context }) => ({
        type: 'replan.restored' as const,
        pending: context.index.pendingAfter(context.ack?.eventId ?? null),
        lastAck: context.ack,
      }),
    ),
  },
}).createMachine({
  id: 'log',
  context: {
    index: EventIndex.empty(),
    files: untrackedFiles(),
    ack: null,
    scansRequested: 1,
    scanStartedAt: 0,
    scansCompleted: 0,
    rescan: false,
    callerAsked: true,
    scanForCaller: false,
    deferred: false,
    queuedAck: null,
    savingAckRequestId: 0,
    ackSavedRequestId: 0,
    ackError: null,
    lastError: null,
    warnings: [],
  },
  initial: 'loading',
  states: {
    loading: {
      description: 'Reading events.jsonl and state.json once; the index lives in memory afterwards.',
      invoke: {
        src: 'loadJournal',
        onDone: {
          target: 'ready',
          actions: [
            assign(({ event }) => ({
              index: event.output.index,
              files: event.output.files,
              ack: event.output.ack,
              warnings: event.output.warnings,
            })),
            'announceRestored',
          ],
        },
        onError: {
          target: 'failed',
          actions: assign(({ event }) => ({ lastError: errorMessage(event.error) })),
        },
      },
    },
    failed: {
      description: 'The journal could not be loaded; lastError says why and how to fix it.',
    },
    ready: {
      description:
        'The journal is loaded: scans and ack writes run side by side, neither waiting for the other.',
      type: 'parallel',
      states: {
        scan: {
          description:
            'Brings the log up to date with the files: stat all, hash what changed, append events.',
          initial: 'scanning',
          states: {
            idle: {
              description:
                'The log matches the files as of the last scan; a watcher hint or a caller starts the next.',
              on: {
                'file.changed': { target: 'settling', actions: 'countRequest' },
                'log.reconcile': [
                  { guard: 'filesUnchanged', actions: 'countRequestAnswered' },
                  { target: 'scanning', actions: ['countRequest', 'markCallerAsked'] },
                ],
              },
            },
            settling: {
              description:
                'A watcher noticed a change (or a change was too fresh to trust): waiting briefly so one save becomes one event.',
              after: { settle: 'scanning' },
              on: {
                'file.changed': {},
                'log.reconcile': { target: 'scanning', actions: ['countRequest', 'markCallerAsked'] },
              },
            },
            scanning: {
              description:
                'One reconcile at a time: a hint or request that comes meanwhile marks a rescan, which starts as soon as this scan ends.',
              entry: 'startScan',
              on: {
                'file.changed': { actions: ['countRequest', 'markRescan'] },
                'log.reconcile': { actions: ['countRequest', 'markCallerAsked', 'markRescan'] },
              },
              invoke: {
                src: 'reconcileFiles',
                input: ({ context }) => ({ files: context.files, requested: context.scanForCaller }),
                onDone: {
                  target: 'scanned',
                  actions: [
                    assign(({ context, event }) => ({
                      index: context.index.appended(event.output.events),
                      files: event.output.files,
                      deferred: event.output.deferred,
                      scansCompleted: context.scanStartedAt,
                      lastError: null,
                    })),
                    enqueueActions(({ enqueue, event }) => {
                      if (event.output.events.length === 0) return;
                      const appended: LogAppended = { type: 'log.appended', events: event.output.events };
                      enqueue.sendTo(({ system }) => system.get('replan'), appended);
                    }),
                  ],
                },
                onError: {
                  target: 'scanned',
                  actions: assign(({ context, event }) => ({
                    lastError: `Could not reconcile .pulse/: ${errorMessage(event.error)}`,
                    deferred: false,
                    scansCompleted: context.scanStartedAt,
                  })),
                },
              },
            },
            scanned: {
              description:
                'Transient: scans again if asked meanwhile, settles if a change was too fresh to log, else idle.',
              always: [
                { guard: 'rescanNeeded', target: 'scanning' },
                { guard: 'deferred', target: 'settling' },
                { target: 'idle' },
              ],
            },
          },
        },
        ack: {
          description: 'Makes accepted acks durable in state.json, one write at a time.',
          initial: 'idle',
          states: {
            idle: {
              description: 'No ack is being written.',
              on: { 'ack.record': { target: 'saving', actions: 'queueAck' } },
            },
            saving: {
              description:
                'Writing the accepted ack to state.json atomically; an ack accepted meanwhile is queued, and only the latest is kept.',
              entry: 'takeQueuedAck',
              on: { 'ack.record': { actions: 'queueAck' } },
              invoke: {
                src: 'saveAck',
                input: ({ context }) => ({ ack: context.ack! }),
                onDone: {
                  target: 'saved',
                  actions: assign(({ context }) => ({ ackSavedRequestId: context.savingAckRequestId })),
                },
                onError: {
                  target: 'saved',
                  actions: assign(({ context, event }) => ({
                    ackError: { requestId: context.savingAckRequestId, message: errorMessage(event.error) },
                    lastError: `Could not write state.json: ${errorMessage(event.error)}`,
                  })),
                },
              },
            },
            saved: {
              description: 'Transient: writes the queued ack next, if there is one, else idle.',
              always: [{ guard: 'ackQueued', target: 'saving' }, { target: 'idle' }],
            },
          },
        },
      },
    },
  },
});
