import type { PolledSource, ToolSafety } from './external.js';
import { type Answering, type Asking, answerOf } from './reply.js';
import type {
  LoadedSources,
  ServerSummary,
  SourcesContext,
  SourcesTrust,
  SourceTestReply,
  SourceTestResult,
} from './sources-context.js';

/*
 * What each of the sources supervisor's decisions does, as pure functions of its context: its
 * named actions apply them, so each can be read, tested and swapped on its own.
 */

/** How many tests may run at once. */
export const MAX_TESTS_RUNNING = 4;

/** A decision about a test: what changes in the context, and the reply to its request (null: none yet). */
export type SourcesDecision = Answering<SourcesContext>;

/** A test request asks this: its source, and who hears the answer. */
type TestRequest = Asking<SourceTestReply> & { source: string };

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

/** Why a source cannot run although it may be enabled: its server is disabled. */
export const sourceBlocked = (source: PolledSource, servers: readonly ServerSummary[]): string | null => {
  const disabled = servers.find((server) => server.name === source.server)?.disabled ?? null;
  return disabled === null ? null : `server "${source.server}" is disabled: ${disabled}`;
};

/** Whether a source gets a poller: enabled, and its server can run. */
const runs = (source: PolledSource, servers: readonly ServerSummary[]) =>
  source.enabled && sourceBlocked(source, servers) === null;

/** The source of that name in the config loaded, if any. */
export const sourceNamed = (context: SourcesContext, name: string): PolledSource | undefined =>
  context.sources.find((source) => source.name === name);

/** The child id of the test that answers `requestId`. */
export const testActorId = (requestId: number): string => `test.${requestId}`;

/** A decision that only answers the request. */
const answering = (asking: Asking<SourceTestReply>, reply: SourceTestReply): SourcesDecision => ({
  changes: {},
  reply: answerOf(asking, reply),
});

/**
 * The pollers a newly loaded config changes: those of sources that no longer run, or whose config
 * or server changed (their fingerprint), stop; those of sources that run and had none start.
 */
export const pollerChanges = (
  context: SourcesContext,
  next: LoadedSources,
): { stop: string[]; start: PolledSource[] } => {
  const wanted = new Map(next.sources.filter((s) => runs(s, next.servers)).map((s) => [s.name, s]));
  const stop: string[] = [];
  for (const source of context.sources) {
    if (!runs(source, context.servers)) continue;
    const keep =
      wanted.has(source.name) && next.fingerprints[source.name] === context.fingerprints[source.name];
    if (keep) wanted.delete(source.name);
    else stop.push(source.name);
  }
  return { stop, start: [...wanted.values()] };
};

/** A config loaded: it is the last good one, and any error is over. */
export const configTaken = (context: SourcesContext, next: LoadedSources): Partial<SourcesContext> => ({
  sources: next.sources,
  servers: next.servers,
  fingerprints: next.fingerprints,
  warnings: next.warnings,
  thinker: next.thinker,
  trust: next.trust,
  error: null,
  // An untrusted file runs nothing: a broken edit after it has nothing good to keep running.
  goodConfigLoaded: next.trust.status !== 'untrusted',
  loads: context.loads + 1,
});

/** The trust of the file a failed load read, when the loader could tell it (it attaches `trust` to its error). */
export const trustOfError = (error: unknown): SourcesTrust | undefined =>
  typeof error === 'object' && error !== null && 'trust' in error ? (error.trust as SourcesTrust) : undefined;

/** A config that could not be loaded: the last good one keeps running, and the error shows. */
export const configFailed = (
  context: SourcesContext,
  message: string,
  trust: SourcesTrust | undefined,
): Partial<SourcesContext> => ({
  error: message,
  loads: context.loads + 1,
  ...(trust === undefined ? {} : { trust }),
});

/** A test of a source sources.json does not name: refused, with the names it does. */
export const unknownSourceRefused = (context: SourcesContext, request: TestRequest): SourcesDecision => {
  const known = context.sources.map((s) => s.name).join(', ') || 'none';
  const error = `No source "${request.source}" in sources.json. Known: ${known}.`;
  return answering(request, { refused: 'unknown', error });
};

/** A test while sources.json is not trusted: refused, since a test starts the server, with the command that trusts it. */
export const untrustedRefused = (context: SourcesContext, request: TestRequest): SourcesDecision => {
  const command = context.trust.status === 'untrusted' ? context.trust.command : 'pulse trust';
  const error = `.pulse/sources.json is not trusted, so pulse starts none of its servers, for a test neither. To trust it: ${command}`;
  return answering(request, { refused: 'untrusted', error });
};

/** A test while `MAX_TESTS_RUNNING` run: refused, to be asked again once one has ended. */
export const busyRefused = (request: TestRequest): SourcesDecision => {
  const error = `${MAX_TESTS_RUNNING} source tests are running already; try again once one has ended.`;
  return answering(request, { refused: 'busy', error });
};

/** A test of a source whose server cannot run: answered at once as a failed test that says why. */
export const blockedSourceAnswered = (context: SourcesContext, request: TestRequest): SourcesDecision => {
  const source = sourceNamed(context, request.source)!;
  const why = `source "${source.name}" cannot run: ${sourceBlocked(source, context.servers)}`;
  return answering(request, { result: failedTest(source.name, source.server, why) });
};

/** A test started: counted as running, with who asked. */
export const testStarted = (
  context: SourcesContext,
  { requestId, replyTo, source }: TestRequest,
): Partial<SourcesContext> => {
  const tested = sourceNamed(context, source)!;
  return {
    testing: [
      ...context.testing,
      { actorId: testActorId(requestId), asking: { requestId, replyTo }, source, server: tested.server },
    ],
  };
};

/** A test ended with its result: no longer running, and the result is its request's reply. */
export const testEnded = (
  context: SourcesContext,
  actorId: string,
  result: SourceTestResult,
): SourcesDecision => {
  const test = context.testing.find((t) => t.actorId === actorId);
  if (test === undefined) return { changes: {}, reply: null };
  return {
    changes: { testing: context.testing.filter((t) => t !== test) },
    reply: answerOf(test.asking, { result }),
  };
};

/**
 * A test whose effect threw (it reports failures as results, so this is a bug in it): answered
 * as a failed test of the source and server it was asked for, still data.
 */
export const testFailed = (context: SourcesContext, actorId: string, message: string): SourcesDecision => {
  const test = context.testing.find((t) => t.actorId === actorId);
  return test === undefined
    ? { changes: {}, reply: null }
    : testEnded(context, actorId, failedTest(test.source, test.server, message));
};
