import { assign, type EventObject, enqueueActions, fromCallback, fromPromise, setup } from 'xstate';
import { errorMessage } from './error-message.js';
import type { PolledSource } from './external.js';
import type { GateSettings } from './gate-settings.js';
import { pollerMachine } from './poller.js';
import { applyAnswering } from './reply.js';
import {
  INITIAL_SOURCES_CONTEXT,
  type LoadedSources,
  pollerId,
  type SourcesContext,
  type SourcesEvent,
  type SourcesTrust,
  type SourceTestResult,
} from './sources-context.js';
import * as decisions from './sources-decisions.js';

const apply = applyAnswering<SourcesContext>;

/** A `sources.test` request, as its actions take it. */
type TestRequest = Extract<SourcesEvent, { type: 'sources.test' }>;

/**
 * Owns `sources.json`: loads it, hands its `reflection` settings to the gate, and reconciles
 * one poller per enabled source whose server can run: new sources start, removed ones stop,
 * changed ones restart. A broken edit keeps the last good config running and shows the error.
 * Tests one source on request (`sources.test`), through the same effects as its poller.
 */
export const sourcesMachine = setup({
  types: {
    context: {} as SourcesContext,
    events: {} as SourcesEvent,
  },
  actors: {
    poller: pollerMachine,
    loadSources: fromPromise<LoadedSources>(async () => {
      throw new Error('loadSources not provided');
    }),
    testSource: fromPromise<SourceTestResult, { source: PolledSource; raw: boolean }>(async () => {
      throw new Error('testSource not provided');
    }),
    /** Sends `trust.changed` when the file's trust is given or taken back (`pulse trust`, `--revoke`). */
    watchTrust: fromCallback<EventObject, SourcesTrust>(() => {
      throw new Error('watchTrust not provided');
    }),
  },
  guards: {
    isUntrusted: ({ context }) => context.trust.status === 'untrusted',
    isUnknownSource: ({ context }, { source }: { source: string }) =>
      decisions.sourceNamed(context, source) === undefined,
    isBlockedSource: ({ context }, { source }: { source: string }) => {
      const known = decisions.sourceNamed(context, source);
      return known !== undefined && decisions.sourceBlocked(known, context.servers) !== null;
    },
    isTestingAtCapacity: ({ context }) => context.testing.length >= decisions.MAX_TESTS_RUNNING,
  },
  actions: {
    /** Hands the config's `reflection` settings to the gate, when the system has one. */
    configureGate: enqueueActions(({ enqueue, system }, { settings }: { settings: GateSettings }) => {
      const gate = system.get('gate');
      const configure = { type: 'gate.configure', settings } as const;
      if (gate !== undefined) enqueue.sendTo(gate, configure);
    }),
    /** Stops the pollers the new config changes or removes, and starts those it adds or changes. */
    reconcilePollers: enqueueActions(({ context, enqueue }, { next }: { next: LoadedSources }) => {
      const { stop, start } = decisions.pollerChanges(context, next);
      for (const name of stop) enqueue.stopChild(pollerId(name));
      for (const source of start)
        enqueue.spawnChild('poller', {
          id: pollerId(source.name),
          systemId: pollerId(source.name),
          input: { source },
        });
    }),
    takeConfig: assign(({ context }, { next }: { next: LoadedSources }) =>
      decisions.configTaken(context, next),
    ),
    noteConfigError: assign(
      ({ context }, { message, trust }: { message: string; trust: SourcesTrust | undefined }) =>
        decisions.configFailed(context, message, trust),
    ),
    refuseUnknownSource: enqueueActions((args, request: TestRequest) =>
      apply(args, decisions.unknownSourceRefused(args.context, request)),
    ),
    refuseUntrusted: enqueueActions((args, request: TestRequest) =>
      apply(args, decisions.untrustedRefused(args.context, request)),
    ),
    refuseBusy: enqueueActions((args, request: TestRequest) => apply(args, decisions.busyRefused(request))),
    answerBlockedSource: enqueueActions((args, request: TestRequest) =>
      apply(args, decisions.blockedSourceAnswered(args.context, request)),
    ),
    startTest: enqueueActions(({ context, enqueue }, request: TestRequest) => {
      enqueue.spawnChild('testSource', {
        id: decisions.testActorId(request.requestId),
        input: { source: decisions.sourceNamed(context, request.source)!, raw: request.raw },
      });
      enqueue.assign(decisions.testStarted(context, request));
    }),
    recordTestResult: enqueueActions(
      (args, { actorId, result }: { actorId: string; result: SourceTestResult }) => {
        args.enqueue.stopChild(actorId);
        apply(args, decisions.testEnded(args.context, actorId, result));
      },
    ),
    recordTestFailure: enqueueActions((args, { actorId, message }: { actorId: string; message: string }) => {
      args.enqueue.stopChild(actorId);
      apply(args, decisions.testFailed(args.context, actorId, message));
    }),
  },
}).createMachine({
  id: 'sources',
  context: INITIAL_SOURCES_CONTEXT,
  initial: 'loading',
  on: {
    'sources.test': [
      { guard: 'isUntrusted', actions: { type: 'refuseUntrusted', params: ({ event }) => event } },
      {
        guard: { type: 'isUnknownSource', params: ({ event }) => event },
        actions: { type: 'refuseUnknownSource', params: ({ event }) => event },
      },
      {
        guard: { type: 'isBlockedSource', params: ({ event }) => event },
        actions: { type: 'answerBlockedSource', params: ({ event }) => event },
      },
      { guard: 'isTestingAtCapacity', actions: { type: 'refuseBusy', params: ({ event }) => event } },
      { actions: { type: 'startTest', params: ({ event }) => event } },
    ],
    'xstate.done.actor.test.*': {
      actions: {
        type: 'recordTestResult',
        params: ({ event }) => ({ actorId: event.actorId, result: event.output }),
      },
    },
    'xstate.error.actor.test.*': {
      // The effect reports failures as results; this is a bug in it, still answered as data.
      actions: {
        type: 'recordTestFailure',
        params: ({ event }) => ({ actorId: event.actorId, message: errorMessage(event.error) }),
      },
    },
  },
  states: {
    loading: {
      description: 'Reading sources.json (and PULSE_MCP_SERVERS) and reconciling the pollers with it.',
      on: { 'config.changed': { target: 'loading', reenter: true } },
      invoke: {
        src: 'loadSources',
        onDone: {
          target: 'running',
          actions: [
            { type: 'configureGate', params: ({ event }) => ({ settings: event.output.gate }) },
            { type: 'reconcilePollers', params: ({ event }) => ({ next: event.output }) },
            { type: 'takeConfig', params: ({ event }) => ({ next: event.output }) },
          ],
        },
        onError: {
          target: 'running',
          actions: {
            type: 'noteConfigError',
            params: ({ event }) => ({
              message: errorMessage(event.error),
              trust: decisions.trustOfError(event.error),
            }),
          },
        },
      },
    },
    running: {
      description:
        'Pollers run for the last good config; an edit of sources.json, or its trust taken back, reloads it.',
      always: { guard: 'isUntrusted', target: 'untrusted' },
      invoke: { src: 'watchTrust', input: ({ context }) => context.trust },
      on: { 'config.changed': 'loading', 'trust.changed': 'loading' },
    },
    untrusted: {
      description:
        'sources.json is not trusted: none of its servers runs, no URL or model is asked, no variable read; pulse trust loads it.',
      invoke: { src: 'watchTrust', input: ({ context }) => context.trust },
      on: { 'config.changed': 'loading', 'trust.changed': 'loading' },
    },
  },
});
