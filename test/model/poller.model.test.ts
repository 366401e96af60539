import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assign,
  type InspectionEvent,
  initialTransition,
  SimulatedClock,
  type SnapshotFrom,
  setup,
  transition,
  waitFor,
} from 'xstate';
import { createTestModel, type TestPath } from 'xstate/graph';
import {
  acceptUnseen,
  createPipeline,
  inboxAtRest,
  listedItem,
  type Pipeline,
} from '../../harness/pipeline.js';
import type { ExternalItem, PolledSource } from '../../machines/external.js';
import { pollerMachine } from '../../machines/poller.js';
import type { FetchOutcome } from '../../machines/poller-context.js';
import { CATCH_UP_MS } from '../../machines/poller-decisions.js';
import { createItemFetcher } from '../../src/effects/fetch-items.js';
import { ClientPool } from '../../src/sources/client/client-pool.js';
import { ask } from '../../src/system/ask.js';
import { exportCoverage, MachineCoverage } from '../support/machine-coverage.js';
import { type FixtureFiles, fixtureFiles, startHttpFixture } from '../support/source-fixture.js';

/*
 * Model-based test of a source's poller. A small test-only statechart says, after each step,
 * what the poller must be doing (polling, waiting, catching up, backing off), when its next poll
 * is due to the millisecond, how many polls and failures it counted, and which items the inbox
 * holds; paths generated from it with xstate/graph run against the real pollerMachine and the
 * real inboxMachine (in-memory effects, a small capacity and per-poll cap) on a simulated clock.
 * Every path runs twice: with the tool's answers scripted, and, where the answer has a real
 * trigger, with the real fetcher calling the fixture MCP server (over HTTP, one process for the
 * file; a fresh client pool per path) (items listed, an isError result, a call outliving the
 * server's timeout). The schedule's timers are the simulated clock's in both: their real trigger
 * is only time.
 */

const INTERVAL_MS = 60_000;
const PER_TICK = 2;
const CAPACITY = 3;
const MAX_LISTED = 6;
const MAX_FAILURES = 2;
const JITTER = 0.5;
/** How long a scripted call that times out took, on the simulated clock. */
const TIMEOUT_MS = 20_000;
/** The fixture server's timeout in the client pool, in real time: the pool is connected before a path starts. */
const FIXTURE_TIMEOUT_MS = 1_000;
/** How long the model waits on a call that never answers. */
const HANG_MS = 24 * 3600_000;

const source: PolledSource = {
  name: 'cal',
  server: 'cal',
  tool: 'list_events',
  args: {},
  intervalMs: INTERVAL_MS,
  enabled: true,
};

/**
 * How the tool answers a call: items (the source lists `more` new ones), an error, no answer
 * before the timeout, or no call at all: its annotations say it is destructive (refused).
 */
type Answer =
  | { outcome: 'ok'; more: 0 | 1 | 3 }
  | { outcome: 'error' }
  | { outcome: 'timeout' }
  | { outcome: 'refused' };
type Phase = 'polling' | 'waiting' | 'catchingUp' | 'backingOff' | 'refused';

type ModelEvent =
  | ({ type: 'respond' } & Answer)
  /** The call never answers: a day passes on the clock. */
  | { type: 'hang' }
  /** The clock reaches the next poll (checked a millisecond before, too). */
  | { type: 'due' }
  | { type: 'pollNow' }
  /** A reflection takes everything from the inbox, which makes room. */
  | { type: 'drain' };

interface ModelContext {
  phase: Phase;
  /** A call that will never answer is out. */
  hung: boolean;
  /** The source lists items 1..listed. */
  listed: number;
  /** Items 1..seen went into the inbox, in that order. */
  seen: number;
  /** How many of them the inbox holds (the last ones). */
  queue: number;
  failures: number;
  polls: number;
  catchUps: number;
  /** How long after the last call ended the next poll is due; null while polling. */
  delay: number | null;
  /** What the last step did, for the path search. */
  outcome: string;
}

/** The backoff, computed here from the documented rule: 1 s doubling, capped at 5 min, times 0.5 + jitter / 2. */
/** What a refused source says: its tool says it is destructive. */
const REFUSAL = 'source "cal" is not polled: tool "list_events" of server "cal" says it is destructive';

const backoffMs = (failures: number) =>
  Math.round(Math.min(5 * 60_000, 1_000 * 2 ** (failures - 1)) * (0.5 + JITTER / 2));

const respond = (c: ModelContext, answer: Answer): ModelContext => {
  if (answer.outcome === 'refused') {
    // Not called, and not polled again until sources.json changes: no schedule.
    return {
      ...c,
      phase: 'refused',
      delay: null,
      outcome: `refused${c.failures > 0 ? ' after failures' : ''}`,
    };
  }
  if (answer.outcome !== 'ok') {
    const failures = c.failures + 1;
    return {
      ...c,
      phase: 'backingOff',
      failures,
      delay: backoffMs(failures),
      outcome: `${answer.outcome} → backingOff (failure ${failures})`,
    };
  }
  const listed = c.listed + answer.more;
  const unseen = listed - c.seen;
  const room = CAPACITY - c.queue;
  const taken = Math.min(unseen, PER_TICK, room);
  const capped = unseen > taken;
  const catchUp = capped && room - taken > 0;
  return {
    ...c,
    listed,
    seen: c.seen + taken,
    queue: c.queue + taken,
    failures: 0,
    phase: catchUp ? 'catchingUp' : 'waiting',
    catchUps: c.catchUps + (catchUp ? 1 : 0),
    delay: catchUp ? Math.min(CATCH_UP_MS, INTERVAL_MS) : INTERVAL_MS,
    outcome: `ok → ${catchUp ? 'catchingUp (capped)' : capped ? 'waiting (capped, inbox full)' : 'waiting'}${c.failures > 0 ? ' after failures' : ''}`,
  };
};

const poll = (c: ModelContext, how: string): ModelContext => ({
  ...c,
  phase: 'polling',
  polls: c.polls + 1,
  delay: null,
  outcome: `${how} from ${c.phase}${c.phase === 'backingOff' ? ` (failure ${c.failures})` : ''}`,
});

const apply = (c: ModelContext, event: ModelEvent): ModelContext => {
  switch (event.type) {
    case 'respond':
      return respond(c, event);
    case 'hang':
      return { ...c, hung: true, outcome: 'hang' };
    case 'due':
      return poll(c, 'due');
    case 'pollNow':
      return poll(c, 'pollNow');
    case 'drain':
      return { ...c, queue: 0, outcome: `drain in ${c.phase}` };
  }
};

const model = setup({
  types: { context: {} as ModelContext, events: {} as ModelEvent },
  guards: {
    canRespond: ({ context, event }) => {
      if (context.phase !== 'polling' || context.hung || event.type !== 'respond') return false;
      if (event.outcome === 'refused') return true;
      return event.outcome === 'ok'
        ? context.listed + event.more <= MAX_LISTED
        : context.failures < MAX_FAILURES;
    },
    canHang: ({ context }) => context.phase === 'polling' && !context.hung,
    scheduled: ({ context }) => context.phase !== 'polling' && context.phase !== 'refused',
    canDrain: ({ context }) => context.queue > 0 && !context.hung,
  },
  actions: { step: assign(({ context, event }) => apply(context, event)) },
}).createMachine({
  id: 'pollerModel',
  context: {
    phase: 'polling',
    hung: false,
    listed: 0,
    seen: 0,
    queue: 0,
    failures: 0,
    polls: 1,
    catchUps: 0,
    delay: null,
    outcome: 'start',
  },
  on: {
    respond: { guard: 'canRespond', actions: 'step' },
    hang: { guard: 'canHang', actions: 'step' },
    due: { guard: 'scheduled', actions: 'step' },
    pollNow: { guard: 'scheduled', actions: 'step' },
    drain: { guard: 'canDrain', actions: 'step' },
  },
});

type ModelSnapshot = SnapshotFrom<typeof model>;
type Path = TestPath<ModelSnapshot, ModelEvent>;

const EVENTS: ModelEvent[] = [
  { type: 'respond', outcome: 'ok', more: 0 },
  { type: 'respond', outcome: 'ok', more: 1 },
  { type: 'respond', outcome: 'ok', more: 3 },
  { type: 'respond', outcome: 'error' },
  { type: 'respond', outcome: 'timeout' },
  { type: 'respond', outcome: 'refused' },
  { type: 'hang' },
  { type: 'due' },
  { type: 'pollNow' },
  { type: 'drain' },
];

const describeEvent = (e: ModelEvent): string =>
  e.type === 'respond' ? (e.outcome === 'ok' ? `ok(+${e.more})` : e.outcome) : e.type;

/** A vertex per outcome (what the step did, from where), so that each is reached once, by a shortest path. */
const byOutcome = (s: ModelSnapshot) => JSON.stringify([s.context.outcome, s.context.phase, s.context.hung]);

const paths: Path[] = createTestModel(model, {
  events: EVENTS,
  filterEvents: (snapshot, event) => snapshot.can(event),
}).getShortestPaths({ serializeState: byOutcome });

const stepsOf = (path: Path) => path.steps.filter((s) => s.event.type !== ('xstate.init' as string));

const replay = (path: Path) => {
  let before: ModelSnapshot = initialTransition(model)[0];
  return stepsOf(path).map(({ event }) => {
    const [after] = transition(model, before, event);
    const visit = { event, before, after };
    before = after;
    return visit;
  });
};

/**
 * A path the fixture server can play: it answers or times out, it never hangs for good. A refusal
 * is not among them: the client reads a server's annotations once per connection, and the
 * stateless fixture cannot tell it they changed (test/e2e/source-safety.test.ts refuses for real).
 */
const playableByFixture = (path: Path) =>
  !stepsOf(path).some(
    (s) => s.event.type === 'hang' || (s.event.type === 'respond' && s.event.outcome === 'refused'),
  );

// ---------------------------------------------------------------------------------------------
// Coverage of the real poller's states and transitions.
// ---------------------------------------------------------------------------------------------

const coverage = new MachineCoverage(pollerMachine);
/** The same, through the fixture server only. */
const fixtureCoverage = new MachineCoverage(pollerMachine);

/** The transitions of pollerMachine the model cannot take, and why (none at present). */
const NOT_TAKEN: Record<string, string> = {};

// ---------------------------------------------------------------------------------------------
// The system under test: the real poller and inbox on a simulated clock.
// ---------------------------------------------------------------------------------------------

const itemNo = (n: number) => `item-${n}`;
const listedItems = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: itemNo(i + 1), title: `Item ${i + 1}` }));
const asExternal = (count: number): ExternalItem[] =>
  listedItems(count).map((item) => listedItem(item.id, item.title));

/** How a run answers the poller's calls: scripted, or through the fixture server. */
type Mode = 'scripted' | 'fixture';

class PollerRun {
  readonly clock = new SimulatedClock();
  /** When each call was made, on the simulated clock. */
  readonly calls: number[] = [];
  /** When the last call ended, on the simulated clock: the schedule counts from there. */
  respondedAt = 0;
  #pending: { at: number; answer: (answer: Answer, listed: number) => Promise<void> } | null = null;
  readonly pipeline: Pipeline;
  readonly #coverages: MachineCoverage[];

  constructor(
    readonly mode: Mode,
    /** The fixture's files, this run's pool, and how many calls the server had received before it. */
    readonly fixture: { files: FixtureFiles; pool: ClientPool; before: number } | null,
  ) {
    this.#coverages = mode === 'fixture' ? [coverage, fixtureCoverage] : [coverage];
    const fetcher =
      fixture === null
        ? null
        : createItemFetcher({
            pool: fixture.pool,
            secrets: () => [],
            random: () => JITTER,
            now: () => this.clock.now(),
          });
    const fetch = (input: PolledSource) =>
      new Promise<FetchOutcome>((resolve) => {
        const at = this.clock.now();
        this.calls.push(at);
        // Held until the step says how the tool answers; the clock stands still meanwhile unless the step moves it.
        this.#pending = {
          at,
          answer: async (answer, listed) => {
            if (fetcher === null) {
              resolve(this.#scripted(at, answer, listed));
              return;
            }
            await fixture!.files.setControl(
              answer.outcome === 'ok'
                ? { items: listedItems(listed) }
                : { mode: answer.outcome === 'error' ? 'isError' : 'hang' },
            );
            resolve(await fetcher(input));
          },
        };
      });
    this.pipeline = createPipeline({
      clock: this.clock,
      inbox: { input: { capacity: CAPACITY, perTickCap: PER_TICK }, accept: acceptUnseen() },
      poller: { source, fetch },
      inspect: (e) => this.#inspect(e),
    });
  }

  #scripted(at: number, answer: Answer, listed: number): FetchOutcome {
    const durationMs = this.clock.now() - at;
    if (answer.outcome === 'ok')
      return { ok: true, items: asExternal(listed), at, durationMs, jitter: JITTER };
    if (answer.outcome === 'refused') {
      const refused = { hints: { destructiveHint: true }, verdict: 'refused', message: REFUSAL } as const;
      return { ok: false, refused, error: REFUSAL, at, durationMs, jitter: JITTER };
    }
    const error =
      answer.outcome === 'error'
        ? 'server "cal" answered with an error: list_events failed'
        : `server "cal" did not answer within ${TIMEOUT_MS / 1000} s`;
    return { ok: false, error, at, durationMs, jitter: JITTER };
  }

  #inspect(event: InspectionEvent) {
    // Events of the actors' creation come before `pipeline` is assigned: the states they show are seen again at start.
    const pipeline = this.pipeline as Pipeline | undefined;
    if (pipeline === undefined || pipeline.poller() !== event.actorRef) return;
    for (const c of this.#coverages) c.inspect(event);
  }

  poller() {
    return this.pipeline.poller();
  }

  inbox() {
    return this.pipeline.inbox();
  }

  async start() {
    this.pipeline.start();
    await waitFor(this.inbox(), (s) => s.matches('ready'), { timeout: 1000 });
  }

  /** Waits until the poller and the inbox have done what the step set off. */
  async settle() {
    await waitFor(this.poller(), (s) => !s.matches('offering'), { timeout: 1000 });
    await waitFor(this.inbox(), inboxAtRest, { timeout: 1000 });
  }

  async execute(event: ModelEvent, before: ModelContext, after: ModelContext) {
    const poller = this.poller();
    switch (event.type) {
      case 'respond': {
        const pending = this.#pending!;
        this.#pending = null;
        if (event.outcome === 'timeout' && this.mode === 'scripted') {
          this.clock.increment(TIMEOUT_MS);
          expect(poller.getSnapshot().value, 'nothing fires while the call is out').toBe('polling');
          expect(this.calls).toHaveLength(before.polls);
        }
        await pending.answer(event, after.listed);
        await waitFor(poller, (s) => !s.matches('polling'), {
          timeout: FIXTURE_TIMEOUT_MS + 5_000,
        });
        this.respondedAt = this.clock.now();
        break;
      }
      case 'hang':
        this.clock.increment(HANG_MS);
        break;
      case 'due': {
        const due = this.respondedAt + before.delay!;
        expect(poller.getSnapshot().context.nextPollAt, 'the next poll as the poller tells it').toBe(due);
        this.clock.set(due - 1);
        expect(poller.getSnapshot().value, 'not a millisecond early').toBe(before.phase);
        expect(this.calls).toHaveLength(before.polls);
        this.clock.set(due);
        expect(this.calls.at(-1), 'the call goes out when due').toBe(due);
        break;
      }
      case 'pollNow':
        poller.send({ type: 'poller.pollNow' });
        expect(this.calls.at(-1), 'the call goes out at once').toBe(this.clock.now());
        break;
      case 'drain':
        await ask(this.inbox(), (asking) => ({ type: 'inbox.drain', ...asking }));
        break;
    }
    await this.settle();
  }

  stop() {
    this.pipeline.stop();
  }
}

/** The poller and the inbox are where the model says. */
const check = async (run: PollerRun, expected: ModelContext, where: string) => {
  const { value, context } = run.poller().getSnapshot();
  expect(value, `${where}: the poller's state`).toBe(expected.phase);
  expect(context, `${where}: the poller's counts`).toMatchObject({
    polls: expected.polls,
    failures: expected.failures,
    itemsInserted: expected.seen,
    catchUps: expected.catchUps,
  });
  expect({ error: context.lastError }, `${where}: an error shown exactly while failing or refused`).toEqual({
    error: expected.phase === 'refused' ? REFUSAL : expected.failures === 0 ? null : expect.any(String),
  });
  if (expected.delay === null)
    expect(context.nextPollAt, `${where}: no poll scheduled while polling`).toBe(null);
  else expect(context.nextPollAt, `${where}: the next poll`).toBe(run.respondedAt + expected.delay);
  expect(run.calls, `${where}: one call per poll`).toHaveLength(expected.polls);
  const inbox = run
    .inbox()
    .getSnapshot()
    .context.events.map((e) => e.item_id);
  const held = Array.from({ length: expected.queue }, (_, i) =>
    itemNo(expected.seen - expected.queue + i + 1),
  );
  expect(inbox, `${where}: the inbox, in the order the items came`).toEqual(held);
  if (run.fixture !== null) {
    // Every answered call reached the server; one still held by the step has not yet.
    const answered = expected.polls - (expected.phase === 'polling' ? 1 : 0);
    const calls = await run.fixture.files.calls((line) => line.tool === source.tool);
    expect(calls.length - run.fixture.before, `${where}: the calls the fixture server received`).toBe(
      answered,
    );
  }
};

// ---------------------------------------------------------------------------------------------

let stepsRun = 0;
let fixturePaths = 0;

afterAll(() => exportCoverage(coverage.record('poller', 'poller.model', 'in-process', NOT_TAKEN)));

afterAll(() => {
  console.log(
    `poller model: ${paths.length} paths (${fixturePaths} of them also through the fixture server), ${stepsRun} steps; pollerMachine ${coverage.summary()}; through the fixture server alone ${fixtureCoverage.summary()}`,
  );
  const missing = coverage.missingTransitions();
  console.log(
    missing.length === 0
      ? 'not taken by the poller model: none'
      : `not taken by the poller model:\n${missing.map((t) => `  ${t}\n    ${NOT_TAKEN[t] ?? '(no reason given)'}`).join('\n')}`,
  );
});

/** The fixture server all fixture runs call, one at a time, each through a client pool of its own. */
let server: { dir: string; files: FixtureFiles; url: string; child: ChildProcess | null } | null = null;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pulse-poller-model-'));
  const files = await fixtureFiles(dir, 'cal', { items: [] });
  server = { dir, files, url: '', child: null };
  server.url = await startHttpFixture(files.args, (child) => {
    server!.child = child;
  });
  // One connect on a roomy timeout first: the SDK's first connect (code loaded and compiled, the
  // server/discover probe) must not eat the 1 s the first path gets.
  const warm = new ClientPool({
    cal: { kind: 'http', name: 'cal', url: server.url, headers: {}, timeoutMs: 20_000 },
  });
  await warm.callTool('cal', source.tool, {});
  await warm.close();
});

afterAll(async () => {
  server?.child?.kill('SIGKILL');
  if (server !== null) await rm(server.dir, { recursive: true, force: true });
});

const runPath = async (path: Path, mode: Mode) => {
  let fixture: { files: FixtureFiles; pool: ClientPool; before: number } | null = null;
  if (mode === 'fixture') {
    const { files, url } = server!;
    await files.setControl({ items: [] });
    const pool = new ClientPool(
      { cal: { kind: 'http', name: 'cal', url, headers: {}, timeoutMs: FIXTURE_TIMEOUT_MS } },
      { onStderr: () => {}, onLog: () => {} },
    );
    // Connected before the path starts, so that only a call the path hangs can run out of time.
    await pool.callTool('cal', source.tool, {});
    fixture = { files, pool, before: (await files.calls()).length };
  }
  const run = new PollerRun(mode, fixture);
  try {
    await run.start();
    await check(run, initialTransition(model)[0].context, 'start');
    for (const [index, { event, before, after }] of replay(path).entries()) {
      const where = `step ${index + 1} (${describeEvent(event)})`;
      await run.execute(event, before.context, after.context);
      await check(run, after.context, where);
      stepsRun++;
    }
  } finally {
    run.stop();
    await fixture?.pool.close();
  }
};

describe('poller schedule, model-based, against the real poller and inbox', () => {
  it('generates paths through every outcome: capped, inbox full, errors and timeouts in a row, a call that never answers', () => {
    const outcomes = new Set(paths.flatMap((p) => replay(p).map(({ after }) => after.context.outcome)));
    for (const outcome of [
      'ok → waiting',
      'ok → catchingUp (capped)',
      'ok → waiting (capped, inbox full)',
      'ok → waiting after failures',
      'error → backingOff (failure 1)',
      'error → backingOff (failure 2)',
      'timeout → backingOff (failure 1)',
      'timeout → backingOff (failure 2)',
      'hang',
      'due from waiting',
      'due from catchingUp',
      'due from backingOff (failure 1)',
      'due from backingOff (failure 2)',
      'pollNow from waiting',
      'pollNow from catchingUp',
      'pollNow from backingOff (failure 1)',
      'refused',
      'refused after failures',
    ]) {
      expect(outcomes, outcome).toContain(outcome);
    }
  });

  describe.each(
    paths.map(
      (p) =>
        [
          stepsOf(p)
            .map((s) => describeEvent(s.event))
            .join(' → ') || '(start)',
          p,
        ] as const,
    ),
  )('%s', (_, path) => {
    it('polls, waits, catches up and backs off as the model says, with scripted answers', async () => {
      await runPath(path, 'scripted');
    });

    // A call that never answers would hold a real server's connection open until the test times out.
    if (playableByFixture(path)) {
      it('does the same with the real fetcher, client pool and fixture MCP server', async () => {
        fixturePaths++;
        await runPath(path, 'fixture');
      });
    }
  });

  it('has visited every state of pollerMachine, and taken every transition the model can', () => {
    expect(coverage.missingStates()).toEqual([]);
    expect(coverage.missingTransitions()).toEqual(Object.keys(NOT_TAKEN));
  });
});
