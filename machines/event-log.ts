import { and, assign, enqueueActions, fromPromise, not, raise, sendTo, setup } from 'xstate';
import { errorMessage } from './error-message.js';
import {
  type EventLogContext,
  type EventLogEvent,
  initialEventLogContext,
  type LoadedJournal,
  type LogAppended,
  type LogFaultsChanged,
  type ReconcileInput,
  type ReconcileOutput,
  type SaveReplanInput,
} from './event-log-context.js';
import * as decisions from './event-log-decisions.js';
import { replaceRegion } from './event-log-replace.js';
import { blindSpots, REPLACE_WINDOW_MS, sameFaults } from './log-faults.js';
import { type PlanSnapshot, planSnapshot } from './plan-diff.js';
import { PULSE_FILES, type PulseEvent, type PulseFileName } from './pulse-files.js';
import type { ReplanRecord } from './replan-context.js';

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
    /** One scan for a burst of notices (a save's dance), ≥ FRESH_CHANGE_MS so a single write is logged at the first scan. */
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
    /** No caller waits for a scan: each request counted in is answered. */
    allAnswered: ({ context }) => decisions.allAnswered(context),
    deferred: ({ context }) => context.deferred,
    ackQueued: ({ context }) => context.queuedAck !== null,
    /** Something could not be read or written at the last scan: look again, and never skip a caller's scan. */
    troubled: ({ context }) => decisions.troubled(context),
    /** A known file is missing within its replace window: a caller's request waits for the scan that resolves it. */
    replacing: ({ context }) => decisions.replacing(context),
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
    restoreJournal: assign((_, journal: LoadedJournal) => decisions.journalRestored(journal)),
    noteLoadError: assign((_, { error }: { error: unknown }) => ({ lastError: errorMessage(error) })),
    countRequest: assign(({ context }) => ({ scansRequested: context.scansRequested + 1 })),
    /** Answers a caller's request at once, as a scan that started now and found nothing. */
    countRequestAnswered: assign(({ context }) => ({
      scansRequested: context.scansRequested + 1,
      scansCompleted: context.scansRequested + 1,
    })),
    markCallerAsked: assign({ callerAsked: true }),
    markRescan: assign({ rescan: true }),
    startScan: assign(({ context }) => decisions.scanStarted(context)),
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
    queueAck: assign(({ context }, record: ReplanRecord) => decisions.ackQueued(context, record)),
    takeQueuedAck: assign(({ context }) => decisions.queuedAckTaken(context)),
    recordScan: assign(({ context }, output: ReconcileOutput) => decisions.scanRecorded(context, output)),
    recordScanError: assign(({ context }, { error }: { error: unknown }) =>
      decisions.scanFailed(context, error),
    ),
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
    recordAckSaved: enqueueActions(({ context, enqueue }) => {
      const { changes, replies } = decisions.ackSaved(context);
      for (const { to, event } of replies) enqueue.sendTo(to, event);
      enqueue.assign(changes);
    }),
    recordAckError: enqueueActions(({ context, enqueue }, { error }: { error: unknown }) => {
      const { changes, replies } = decisions.ackFailed(context, error);
      for (const { to, event } of replies) enqueue.sendTo(to, event);
      enqueue.assign(changes);
    }),
    announceRestored: sendTo(
      ({ system }) => system.get('replan'),
      ({ context }, { plan }: { plan: PlanSnapshot }) => decisions.restored(context, plan),
    ),
  },
}).createMachine({
  id: 'log',
  context: initialEventLogContext,
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
                  // Every request so far is answered: this one is too, with no count to keep (no new snapshot).
                  { guard: and([not('troubled'), not('replacing'), 'allAnswered', 'filesUnchanged']) },
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
                'Writing the accepted ack to state.json atomically, then answering each ack it records; an ack accepted meanwhile is queued, and only the latest record is kept.',
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
