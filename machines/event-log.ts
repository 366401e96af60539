import { and, assign, enqueueActions, fromPromise, not, raise, sendTo, setup } from 'xstate';
import { errorMessage } from './error-message.js';
import { EventIndex } from './event-index.js';
import {
  blindSpots,
  type FileFault,
  type LogFaults,
  NO_FAULTS,
  needsRecheck,
  REPLACE_WINDOW_MS,
  sameFaults,
  unloggedReason,
  unsavedStateReason,
} from './log-faults.js';
import { type PlanSnapshot, planSnapshot } from './plan-diff.js';
import {
  type AckRecord,
  PULSE_FILES,
  type PulseEvent,
  type PulseFileName,
  type TrackedFiles,
  untrackedFiles,
} from './pulse-files.js';
import type { ReplanRecord } from './replan.js';
import type { ReplanAck } from './replan-acks.js';
import type { SavedAgent } from './replan-agents.js';

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
  queuedAck: (SaveReplanInput & { requestId: number }) | null;
  savingAckRequestId: number;
  ackSavedRequestId: number;
  ackError: { requestId: number; message: string } | null;
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

/**
 * One file's replace window: `here` ⇄ `away`, and `confirming` once the window ran out, until a
 * scan resolves it. A watcher notice for the file while it is away starts the window again: the
 * name is in use (an editor renaming its new file in), though no scan has caught it there yet.
 */
const replaceRegion = (name: PulseFileName) => ({
  initial: 'here' as const,
  states: {
    here: {
      description: 'The file is where the log last saw it, or its absence is logged.',
      always: { guard: { type: 'isAway' as const, params: { name } }, target: 'away' as const },
    },
    away: {
      description:
        'The last scan found the file missing: no event yet, callers wait and guidance or constraints count as unseen; a scan that finds it back resolves it, a notice for it starts the window again.',
      always: { guard: { type: 'isResolved' as const, params: { name } }, target: 'here' as const },
      on: {
        'file.changed': {
          guard: { type: 'isNoticeFor' as const, params: { name } },
          target: 'away' as const,
          reenter: true,
        },
      },
      after: {
        replaceWindow: {
          target: 'confirming' as const,
          actions: [{ type: 'markGone' as const, params: { name } }, 'lookAgain' as const],
        },
      },
    },
    confirming: {
      description: 'The window ran out: the next scan logs the deletion if the file is still missing.',
      always: { guard: { type: 'isResolved' as const, params: { name } }, target: 'here' as const },
      on: {
        'file.changed': {
          guard: { type: 'isNoticeFor' as const, params: { name } },
          target: 'away' as const,
          actions: { type: 'unmarkGone' as const, params: { name } },
        },
      },
    },
  },
});

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
    saveReplan: fromPromise<void, SaveReplanInput>(async () => {
      throw new Error('saveReplan not provided');
    }),
  },
  delays: {
    /**
     * Lets a burst of watcher notices (an atomic save, an editor's backup dance) become one
     * scan. Not shorter than the reconciler's FRESH_CHANGE_MS (20 ms), so a single write is
     * old enough to log at the first scan after its notice.
     */
    debounce: 20,
    /** While something cannot be read or written, how often the log looks again unasked, so it recovers by itself. */
    recheck: 1000,
    /** How soon an ack that could not be written to state.json is written again. */
    retryWrite: 1000,
    /** How long a known file may be missing before its deletion is logged (an editor's safe write brings it back sooner). */
    replaceWindow: REPLACE_WINDOW_MS,
  },
  guards: {
    /**
     * A caller's scan would find nothing: `.pulse/` is still a real folder and every file's stat
     * still matches what the last scan recorded. The wiring provides a synchronous stat check
     * (read-only); without it, every request scans.
     */
    filesUnchanged: (_: { context: EventLogContext }) => false,
    rescanNeeded: ({ context }) => context.rescan,
    deferred: ({ context }) => context.deferred,
    ackQueued: ({ context }) => context.queuedAck !== null,
    /** Something could not be read or written at the last scan: look again, and never skip a caller's scan. */
    troubled: ({ context }) => needsRecheck(context.faults, context.hashesUnsaved),
    /** A known file is missing within its replace window: a caller's request waits for the scan that resolves it. */
    replacing: ({ context }) => context.away.length > 0,
    /** The last scan found this known file missing. */
    isAway: ({ context }: { context: EventLogContext }, { name }: { name: PulseFileName }) =>
      context.away.includes(name),
    /** A watcher noticed this very file (not a scan's own request to look again). */
    isNoticeFor: ({ event }: { event: EventLogEvent }, { name }: { name: PulseFileName }) =>
      event.type === 'file.changed' && event.name === name,
    /** The last scan found this file where it was, or logged its deletion. */
    isResolved: ({ context }: { context: EventLogContext }, { name }: { name: PulseFileName }) =>
      !context.away.includes(name),
  },
  actions: {
    restoreJournal: assign((_, { index, files, ack, agents, acks, loadedAt, warnings }: LoadedJournal) => ({
      index,
      files,
      ack,
      agents,
      acks,
      loadedAt,
      warnings,
    })),
    noteLoadError: assign((_, { error }: { error: unknown }) => ({ lastError: errorMessage(error) })),
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
      scanGone: context.gone,
      gone: [],
    })),
    /** The replace window of a file ran out: the next scan logs its deletion if it is still missing. */
    markGone: assign(({ context }, { name }: { name: PulseFileName }) => ({
      gone: context.gone.includes(name) ? context.gone : [...context.gone, name],
    })),
    /** A notice came for the file after its window ran out: it gets a new window, its deletion is not due yet. */
    unmarkGone: assign(({ context }, { name }: { name: PulseFileName }) => ({
      gone: context.gone.filter((other) => other !== name),
    })),
    /** Asks for a scan as a watcher hint does. */
    lookAgain: raise({ type: 'file.changed', name: 'unknown' } as const),
    /** Only the latest record is kept; it answers every ack queued before it. */
    queueAck: assign(({ context }, record: ReplanRecord) => ({
      queuedAck: {
        ack: record.ack,
        agents: record.agents,
        acks: record.acks,
        requestId: Math.max(record.requestId, context.queuedAck?.requestId ?? 0),
      },
    })),
    takeQueuedAck: assign(({ context }) => ({
      ack: context.queuedAck?.ack ?? context.ack,
      agents: context.queuedAck?.agents ?? context.agents,
      acks: context.queuedAck?.acks ?? context.acks,
      savingAckRequestId: Math.max(context.queuedAck?.requestId ?? 0, context.savingAckRequestId),
      queuedAck: null,
    })),
    recordScan: assign(({ context }, output: ReconcileOutput) => ({
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
    })),
    recordScanError: assign(({ context }, { error }: { error: unknown }) => ({
      lastError: `Could not reconcile .pulse/: ${errorMessage(error)}`,
      deferred: false,
      scansCompleted: context.scanStartedAt,
      gone: [...context.scanGone, ...context.gone.filter((name) => !context.scanGone.includes(name))],
      scanGone: [],
    })),
    /** Tells the replan lifecycle of the events a scan appended, if any. */
    announceAppended: enqueueActions(
      ({ enqueue }, { events, plan }: { events: PulseEvent[]; plan: PlanSnapshot }) => {
        if (events.length === 0) return;
        const appended: LogAppended = { type: 'log.appended', events, plan };
        enqueue.sendTo(({ system }) => system.get('replan'), appended);
      },
    ),
    /** Tells the replan lifecycle when the faults that may hide a guidance/constraints change differ from the last told. */
    announceFaults: enqueueActions(({ context, enqueue }) => {
      const blind = blindSpots(context.faults, context.away);
      if (sameFaults(blind, context.announcedBlind)) return;
      enqueue.assign({ announcedBlind: blind });
      const changed: LogFaultsChanged = { type: 'log.faults', blind };
      enqueue.sendTo(({ system }) => system.get('replan'), changed);
    }),
    recordAckSaved: assign(({ context }) => ({
      ackSavedRequestId: context.savingAckRequestId,
      ackError: null,
      hashesUnsaved: false,
      faults: { ...context.faults, state: null },
    })),
    recordAckError: assign(({ context }, { error }: { error: unknown }) => ({
      ackError: { requestId: context.savingAckRequestId, message: errorMessage(error) },
      faults: {
        ...context.faults,
        state: unsavedStateReason(errorMessage(error)),
      },
    })),
    announceRestored: sendTo(
      ({ system }) => system.get('replan'),
      ({ context }, { plan }: { plan: PlanSnapshot }) => ({
        type: 'replan.restored' as const,
        pending: context.index.pendingAfter(context.ack?.eventId ?? null),
        lastAck: context.ack,
        agents: context.agents,
        at: context.loadedAt,
        plan,
        acks: context.acks,
      }),
    ),
  },
}).createMachine({
  id: 'log',
  context: {
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
    savingAckRequestId: 0,
    ackSavedRequestId: 0,
    ackError: null,
    lastError: null,
    warnings: [],
    faults: NO_FAULTS,
    hashesUnsaved: false,
    announcedBlind: [],
    away: [],
    gone: [],
    scanGone: [],
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
            { type: 'restoreJournal', params: ({ event }) => event.output },
            { type: 'announceRestored', params: ({ event }) => ({ plan: event.output.plan }) },
          ],
        },
        onError: {
          target: 'failed',
          actions: { type: 'noteLoadError', params: ({ event }) => ({ error: event.error }) },
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
                'The log matches the files as of the last scan; a watcher hint or a caller starts the next. While something cannot be read or written, it looks again every second by itself.',
              after: { recheck: { guard: 'troubled', target: 'scanning', actions: 'countRequest' } },
              on: {
                'file.changed': { target: 'debouncing', actions: 'countRequest' },
                'log.reconcile': [
                  {
                    guard: and([not('troubled'), not('replacing'), 'filesUnchanged']),
                    actions: 'countRequestAnswered',
                  },
                  { target: 'scanning', actions: ['countRequest', 'markCallerAsked'] },
                ],
              },
            },
            debouncing: {
              description:
                'A watcher noticed a change (or a change was too fresh to trust): waiting briefly so one save becomes one event.',
              after: { debounce: 'scanning' },
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
                input: ({ context }) => ({
                  files: context.files,
                  requested: context.scanForCaller,
                  saveHashes: context.hashesUnsaved,
                  gone: context.scanGone,
                }),
                onDone: {
                  target: 'scanned',
                  actions: [
                    { type: 'recordScan', params: ({ event }) => event.output },
                    {
                      type: 'announceAppended',
                      params: ({ event }) => ({
                        events: event.output.events,
                        plan: planSnapshot(event.output.files['plan.md']),
                      }),
                    },
                    'announceFaults',
                  ],
                },
                onError: {
                  target: 'scanned',
                  actions: { type: 'recordScanError', params: ({ event }) => ({ error: event.error }) },
                },
              },
            },
            scanned: {
              description:
                'Transient: scans again if asked meanwhile, debounces if a change was too fresh to log, else idle.',
              always: [
                { guard: 'rescanNeeded', target: 'scanning' },
                { guard: 'deferred', target: 'debouncing' },
                { target: 'idle' },
              ],
            },
          },
        },
        replace: {
          description:
            'One region per tracked file: a file found missing is given the replace window to come back (an editor saving by rename) before its deletion is logged.',
          type: 'parallel',
          states: Object.fromEntries(PULSE_FILES.map((name) => [name, replaceRegion(name)])),
        },
        ack: {
          description: 'Makes accepted acks durable in state.json, one write at a time.',
          initial: 'idle',
          states: {
            idle: {
              description: 'No ack is being written.',
              on: {
                'replan.record': {
                  target: 'saving',
                  actions: { type: 'queueAck', params: ({ event }) => event },
                },
              },
            },
            saving: {
              description:
                'Writing the accepted ack to state.json atomically; an ack accepted meanwhile is queued, and only the latest is kept.',
              entry: 'takeQueuedAck',
              on: { 'replan.record': { actions: { type: 'queueAck', params: ({ event }) => event } } },
              invoke: {
                src: 'saveReplan',
                input: ({ context }) => ({ ack: context.ack, agents: context.agents, acks: context.acks }),
                onDone: { target: 'saved', actions: 'recordAckSaved' },
                onError: {
                  target: 'retrying',
                  actions: { type: 'recordAckError', params: ({ event }) => ({ error: event.error }) },
                },
              },
            },
            retrying: {
              description:
                'state.json could not be written (a full disk): the accepted ack stands in memory and is written again after a pause, or at once when another ack comes.',
              after: { retryWrite: 'saving' },
              on: {
                'replan.record': {
                  target: 'saving',
                  actions: { type: 'queueAck', params: ({ event }) => event },
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
