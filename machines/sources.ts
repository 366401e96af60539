import { assign, enqueueActions, fromPromise, setup } from 'xstate';
import { errorMessage } from './error-message.js';
import type { PolledSource, ToolSafety } from './external.js';
import type { GateSettings } from './gate-settings.js';
import { pollerMachine } from './poller.js';

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

/** A test that read nothing, and why. */
export const failedTest = (
  source: string,
  server: string,
  error: string,
  tool: ToolSafety | null = null,
): SourceTestResult => ({
  source,
  server,
  ok: false,
  error,
  items: [],
  item_count: 0,
  raw: null,
  tool,
});

/** The most items a test result lists, so that a huge answer stays a readable one. */
export const TESTED_ITEMS_SHOWN = 200;

/** The answer to a `sources.test`: a result, or why no test ran. */
export type SourceTestReply =
  | { requestId: number; result: SourceTestResult }
  | { requestId: number; refused: 'unknown' | 'busy'; error: string };

export interface SourcesContext {
  sources: PolledSource[];
  servers: ServerSummary[];
  fingerprints: Record<string, string>;
  warnings: string[];
  /** The thinker of the last good config (the rules before one is loaded). */
  thinker: ThinkerSetting;
  /** The last config error; while it holds, the last good config keeps running, if there was one. */
  error: string | null;
  /** Whether a config was ever loaded: pollers then run for the last good one through a broken edit. */
  goodConfigLoaded: boolean;
  loads: number;
  /** The last test replies, newest last; a request finds its own by id. */
  tests: SourceTestReply[];
  testsRunning: number;
}

export type SourcesEvent =
  | { type: 'config.changed' }
  | { type: 'sources.test'; requestId: number; source: string; raw: boolean }
  | { type: `xstate.done.actor.test.${number}`; output: SourceTestResult }
  | { type: `xstate.error.actor.test.${number}`; error: unknown };

export const pollerId = (source: string) => `poller:${source}`;

/** How many tests may run at once, and how many replies are kept for their requests to read. */
const MAX_TESTS_RUNNING = 4;
const TEST_REPLIES_KEPT = 8;

/** Why a source cannot run although it may be enabled: its server is disabled. */
export const sourceBlocked = (source: PolledSource, servers: readonly ServerSummary[]): string | null => {
  const disabled = servers.find((server) => server.name === source.server)?.disabled ?? null;
  return disabled === null ? null : `server "${source.server}" is disabled: ${disabled}`;
};

/** Whether a source gets a poller: enabled, and its server can run. */
const runs = (source: PolledSource, servers: readonly ServerSummary[]) =>
  source.enabled && sourceBlocked(source, servers) === null;

const kept = (tests: readonly SourceTestReply[], reply: SourceTestReply) =>
  [...tests, reply].slice(-TEST_REPLIES_KEPT);

const testEvent = (event: { type: string }) => event as Extract<SourcesEvent, { type: 'sources.test' }>;

const sourceNamed = (context: SourcesContext, name: string) =>
  context.sources.find((source) => source.name === name);

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
  },
  guards: {
    isUnknownSource: ({ context, event }) => sourceNamed(context, testEvent(event).source) === undefined,
    isBlockedSource: ({ context, event }) => {
      const source = sourceNamed(context, testEvent(event).source);
      return source !== undefined && sourceBlocked(source, context.servers) !== null;
    },
    isTestingAtCapacity: ({ context }) => context.testsRunning >= MAX_TESTS_RUNNING,
  },
  actions: {
    refuseUnknownSource: assign(({ context, event }) => {
      const { requestId, source } = testEvent(event);
      const known = context.sources.map((s) => s.name).join(', ') || 'none';
      const error = `No source "${source}" in sources.json. Known: ${known}.`;
      return { tests: kept(context.tests, { requestId, refused: 'unknown', error }) };
    }),
    refuseBusy: assign(({ context, event }) => {
      const error = `${MAX_TESTS_RUNNING} source tests are running already; try again once one has ended.`;
      return {
        tests: kept(context.tests, { requestId: testEvent(event).requestId, refused: 'busy', error }),
      };
    }),
    answerBlockedSource: assign(({ context, event }) => {
      const { requestId } = testEvent(event);
      const source = sourceNamed(context, testEvent(event).source)!;
      const why = `source "${source.name}" cannot run: ${sourceBlocked(source, context.servers)}`;
      return {
        tests: kept(context.tests, { requestId, result: failedTest(source.name, source.server, why) }),
      };
    }),
    startTest: enqueueActions(({ context, event, enqueue }) => {
      const { requestId, source, raw } = testEvent(event);
      enqueue.spawnChild('testSource', {
        id: `test.${requestId}`,
        input: { source: sourceNamed(context, source)!, raw },
      });
      enqueue.assign({ testsRunning: context.testsRunning + 1 });
    }),
    recordTestResult: enqueueActions(({ context, event, enqueue }) => {
      if (!('output' in event)) return;
      const id = event.type.slice('xstate.done.actor.'.length);
      const result = event.output;
      enqueue.stopChild(id);
      enqueue.assign({
        testsRunning: context.testsRunning - 1,
        tests: kept(context.tests, { requestId: Number(id.slice('test.'.length)), result }),
      });
    }),
    recordTestFailure: enqueueActions(({ context, event, enqueue }) => {
      // The effect reports failures as results; this is a bug in it, still answered as data.
      const id = event.type.slice('xstate.error.actor.'.length);
      const requestId = Number(id.slice('test.'.length));
      const error = errorMessage('error' in event ? event.error : event);
      const result = failedTest('', '', error);
      enqueue.stopChild(id);
      enqueue.assign({
        testsRunning: context.testsRunning - 1,
        tests: kept(context.tests, { requestId, result }),
      });
    }),
  },
}).createMachine({
  id: 'sources',
  context: {
    sources: [],
    servers: [],
    fingerprints: {},
    warnings: [],
    thinker: { kind: 'rules', model: null },
    error: null,
    goodConfigLoaded: false,
    loads: 0,
    tests: [],
    testsRunning: 0,
  },
  initial: 'loading',
  on: {
    'sources.test': [
      { guard: 'isUnknownSource', actions: 'refuseUnknownSource' },
      { guard: 'isBlockedSource', actions: 'answerBlockedSource' },
      { guard: 'isTestingAtCapacity', actions: 'refuseBusy' },
      { actions: 'startTest' },
    ],
    'xstate.done.actor.test.*': { actions: 'recordTestResult' },
    'xstate.error.actor.test.*': { actions: 'recordTestFailure' },
  },
  states: {
    loading: {
      description: 'Reading sources.json (and PULSE_MCP_SERVERS) and reconciling the pollers with it.',
      on: { 'config.changed': { target: 'loading', reenter: true } },
      invoke: {
        src: 'loadSources',
        onDone: {
          target: 'running',
          actions: enqueueActions(({ context, event, enqueue, system }) => {
            const next = event.output;
            const gate = system.get('gate');
            const configure = { type: 'gate.configure' as const, settings: next.gate };
            if (gate !== undefined) enqueue.sendTo(gate, configure);
            const wanted = new Map(next.sources.filter((s) => runs(s, next.servers)).map((s) => [s.name, s]));
            for (const source of context.sources) {
              if (!runs(source, context.servers)) continue;
              const keep =
                wanted.has(source.name) &&
                next.fingerprints[source.name] === context.fingerprints[source.name];
              if (keep) wanted.delete(source.name);
              else enqueue.stopChild(pollerId(source.name));
            }
            for (const source of wanted.values()) {
              enqueue.spawnChild('poller', {
                id: pollerId(source.name),
                systemId: pollerId(source.name),
                input: { source },
              });
            }
            enqueue.assign({
              sources: next.sources,
              servers: next.servers,
              fingerprints: next.fingerprints,
              warnings: next.warnings,
              thinker: next.thinker,
              error: null,
              goodConfigLoaded: true,
              loads: context.loads + 1,
            });
          }),
        },
        onError: {
          target: 'running',
          actions: assign(({ context, event }) => ({
            error: errorMessage(event.error),
            loads: context.loads + 1,
          })),
        },
      },
    },
    running: {
      description: 'Pollers run for the last good config; an edit of sources.json reloads it.',
      on: { 'config.changed': 'loading' },
    },
  },
});
