import { assign, type EventObject, enqueueActions, fromCallback, fromPromise, setup } from 'xstate';
import { errorMessage } from './error-message.js';
import type { PolledSource, ToolSafety } from './external.js';
import type { GateSettings } from './gate-settings.js';
import { pollerMachine } from './poller.js';
import * as decisions from './sources-decisions.js';

export { failedTest, sourceBlocked } from './sources-decisions.js';

/** A configured server as status shows it: its strings as written (`${VAR}` unexpanded), so never a secret. */
export interface ServerSummary {
  name: string;
  transport: 'stdio' | 'http';
  /** The command line, or the URL with any password and query values masked. */
  target: string;
  /** The names of its `env` variables (stdio); their values are never shown. */
  env: string[];
  /** The names of the headers it sends (http), `Authorization` for a bearer token included; never their values. */
  headers: string[];
  timeoutMs: number;
  /** Why it cannot run (a `${VAR}` not set), or null. */
  disabled: string | null;
}

/**
 * Who judges external events: the rule thinker (per-source urgency and rules, against the
 * threshold), the agent itself (it receives every event and says in its ack what it did), a
 * model behind an OpenAI-compatible endpoint, or the connected agent's model through MCP sampling.
 */
export type ThinkerKind = 'rules' | 'agent' | 'model' | 'sampling';

/** The thinker sources.json asks for, as status names it: never its endpoint or key. */
export interface ThinkerSetting {
  kind: ThinkerKind;
  /** The model's name with `"thinker": "model"`, else null. */
  model: string | null;
}

/**
 * Whether sources.json may be acted on: there is none, its user trusted these exact bytes (their
 * hash), or not, and then nothing in it runs: no server, no URL, no `${VAR}`, no model endpoint.
 */
export type SourcesTrust =
  | { status: 'none' }
  | { status: 'trusted'; hash: string }
  | {
      status: 'untrusted';
      hash: string;
      /** The one command that trusts it. */
      command: string;
      /** The model endpoint it names, as written and masked, which is not asked either. */
      model: string | null;
    };

/** What the sources supervisor keeps of a loaded config: no server secrets, only what pollers need. */
export interface LoadedSources {
  sources: PolledSource[];
  servers: ServerSummary[];
  /** Per source, a string that changes iff the poller must restart (its config or its server's). */
  fingerprints: Record<string, string>;
  warnings: string[];
  /** The reflection gate's settings from the same file (defaults where it says nothing). */
  gate: GateSettings;
  thinker: ThinkerSetting;
  trust: SourcesTrust;
}

/** An item as a source test shows it. */
export interface TestedItem {
  item_id: string;
  title: string;
  starts_at: string | null;
}

/** The keys found at one place of a tool's answer (`where`: "the top level", "structuredContent", …). */
export interface KeysFound {
  where: string;
  keys: string[];
}

/** What the tool answered, as JSON text cut to a bound, and the keys found in it. */
export interface RawAnswer {
  text: string;
  /** How many characters were cut off the end (0: the whole answer). */
  cut: number;
  keys: KeysFound[];
}

/** One test of one source: the items read from one call of its tool, or why none. Marks nothing seen. */
export interface SourceTestResult {
  source: string;
  server: string;
  ok: boolean;
  error: string | null;
  /** The first items read (at most `TESTED_ITEMS_SHOWN`). */
  items: TestedItem[];
  /** How many items were read in all. */
  item_count: number;
  /** With `raw`: what the tool answered, when it answered. */
  raw: RawAnswer | null;
  /** What the tool says of its side effects in `tools/list`; null when that could not be read. */
  tool: ToolSafety | null;
}

/** The most items a test result lists, so that a huge answer stays a readable one. */
export const TESTED_ITEMS_SHOWN = 200;

/** The answer to a `sources.test`: a result, or why no test ran. */
export type SourceTestReply =
  | { requestId: number; result: SourceTestResult }
  | { requestId: number; refused: 'unknown' | 'busy' | 'untrusted'; error: string };

export interface SourcesContext {
  sources: PolledSource[];
  servers: ServerSummary[];
  fingerprints: Record<string, string>;
  warnings: string[];
  /** The thinker of the last good config (the rules before one is loaded). */
  thinker: ThinkerSetting;
  /** Whether the file loaded last may be acted on. */
  trust: SourcesTrust;
  /** The last config error; while it holds, the last good config keeps running, if there was one. */
  error: string | null;
  /** Whether a config was ever loaded: pollers then run for the last good one through a broken edit. */
  goodConfigLoaded: boolean;
  loads: number;
  /** The last test replies, newest last; a request finds its own by id. */
  tests: SourceTestReply[];
  /** The tests running, each with the request it answers and the source it tests. */
  testing: RunningTest[];
}

/** A source test that is running: its child's id, its request, and what it tests. */
export interface RunningTest {
  actorId: string;
  requestId: number;
  source: string;
  server: string;
}

export type SourcesEvent =
  | { type: 'config.changed' }
  | { type: 'trust.changed' }
  | { type: 'sources.test'; requestId: number; source: string; raw: boolean }
  | { type: `xstate.done.actor.test.${number}`; output: SourceTestResult; actorId: string }
  | { type: `xstate.error.actor.test.${number}`; error: unknown; actorId: string };

export const pollerId = (source: string) => `poller:${source}`;

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
    refuseUnknownSource: assign(({ context }, request: { requestId: number; source: string }) =>
      decisions.unknownSourceRefused(context, request),
    ),
    refuseUntrusted: assign(({ context }, { requestId }: { requestId: number }) =>
      decisions.untrustedRefused(context, requestId),
    ),
    refuseBusy: assign(({ context }, { requestId }: { requestId: number }) =>
      decisions.busyRefused(context, requestId),
    ),
    answerBlockedSource: assign(({ context }, { requestId, source }: { requestId: number; source: string }) =>
      decisions.blockedSourceAnswered(context, {
        requestId,
        source: decisions.sourceNamed(context, source)!,
      }),
    ),
    startTest: enqueueActions(
      (
        { context, enqueue },
        { requestId, source, raw }: { requestId: number; source: string; raw: boolean },
      ) => {
        const tested = decisions.sourceNamed(context, source)!;
        enqueue.spawnChild('testSource', {
          id: decisions.testActorId(requestId),
          input: { source: tested, raw },
        });
        enqueue.assign(decisions.testStarted(context, { requestId, source: tested }));
      },
    ),
    recordTestResult: enqueueActions(
      ({ context, enqueue }, { actorId, result }: { actorId: string; result: SourceTestResult }) => {
        enqueue.stopChild(actorId);
        enqueue.assign(decisions.testEnded(context, actorId, result));
      },
    ),
    recordTestFailure: enqueueActions(
      ({ context, enqueue }, { actorId, message }: { actorId: string; message: string }) => {
        enqueue.stopChild(actorId);
        enqueue.assign(decisions.testFailed(context, actorId, message));
      },
    ),
  },
}).createMachine({
  id: 'sources',
  context: {
    sources: [],
    servers: [],
    fingerprints: {},
    warnings: [],
    thinker: { kind: 'rules', model: null },
    trust: { status: 'none' },
    error: null,
    goodConfigLoaded: false,
    loads: 0,
    tests: [],
    testing: [],
  },
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
