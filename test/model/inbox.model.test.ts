import { afterAll, describe, expect, it } from 'vitest';
import {
  assign,
  createActor,
  fromCallback,
  fromPromise,
  type InspectionEvent,
  initialTransition,
  type SnapshotFrom,
  setup,
  transition,
  waitFor,
} from 'xstate';
import { createTestModel, type TestPath } from 'xstate/graph';
import type { ExternalItem, InboxEvent } from '../../machines/external.js';
import {
  type AcceptInput,
  type AcceptOutput,
  type Drop,
  inboxMachine,
  type OfferReply,
} from '../../machines/inbox.js';
import { MachineCoverage } from '../helpers/machine-coverage.js';

/*
 * Model-based test of the inbox's put-back rules. A small test-only statechart says what the
 * inbox must hold after each step (written here, not borrowed from machines/inbox.ts); paths
 * generated from it with xstate/graph run against the real `inboxMachine` actor, with
 * in-memory fakes for its effects. A small capacity makes put-backs overflow.
 */

const CAPACITY = 4;
const PER_TICK_CAP = 2;
const RESTORED = 2;

type ModelEvent =
  | { type: 'start'; restored: number }
  | { type: 'startBroken' }
  | { type: 'offer'; count: number }
  | { type: 'offerFailing' }
  | { type: 'drain' }
  | { type: 'putBack' }
  | { type: 'consume' };

interface ModelContext {
  /** Items listed so far, so every offer lists fresh ones. */
  listed: number;
  /** Item ids in the inbox, front first. */
  queue: string[];
  /** Item ids of the last drain, not yet put back or consumed. */
  out: string[];
  dropped: string[];
  consumed: string[];
}

const restoredIds = (n: number) => Array.from({ length: n }, (_, i) => `restored-${i + 1}`);

/** The rules, as the seed states them: drain-all; put back at the front in the order taken; overflow drops the put-back events first. */
const model = setup({
  types: { context: {} as ModelContext, events: {} as ModelEvent },
  guards: {
    hasOut: ({ context }) => context.out.length > 0,
  },
}).createMachine({
  id: 'inboxModel',
  context: { listed: 0, queue: [], out: [], dropped: [], consumed: [] },
  initial: 'stopped',
  states: {
    stopped: {
      on: {
        start: {
          target: 'running',
          actions: assign(({ event }) => ({ queue: restoredIds(event.restored) })),
        },
        startBroken: 'running',
      },
    },
    running: {
      on: {
        offer: {
          actions: assign(({ context, event }) => {
            const fresh = Array.from({ length: event.count }, (_, i) => `item-${context.listed + i + 1}`);
            const limit = Math.min(PER_TICK_CAP, CAPACITY - context.queue.length);
            return {
              listed: context.listed + event.count,
              queue: [...context.queue, ...fresh.slice(0, limit)],
            };
          }),
        },
        offerFailing: {
          actions: assign(({ context }) => ({ listed: context.listed + 1 })),
        },
        drain: {
          guard: ({ context }) => context.out.length === 0,
          actions: assign(({ context }) => ({ queue: [], out: context.queue })),
        },
        putBack: {
          guard: 'hasOut',
          actions: assign(({ context }) => {
            const overflow = Math.max(0, context.out.length + context.queue.length - CAPACITY);
            return {
              queue: [...context.out.slice(overflow), ...context.queue],
              dropped: [...context.dropped, ...context.out.slice(0, overflow)],
              out: [],
            };
          }),
        },
        consume: {
          guard: 'hasOut',
          actions: assign(({ context }) => ({ consumed: [...context.consumed, ...context.out], out: [] })),
        },
      },
    },
  },
});

type ModelSnapshot = SnapshotFrom<typeof model>;

const EVENTS: ModelEvent[] = [
  { type: 'start', restored: 0 },
  { type: 'start', restored: RESTORED },
  { type: 'startBroken' },
  { type: 'offer', count: 1 },
  { type: 'offer', count: 3 },
  { type: 'offerFailing' },
  { type: 'drain' },
  { type: 'putBack' },
  { type: 'consume' },
];

const testModel = createTestModel(model, {
  events: EVENTS,
  // A guarded-out event changes nothing: a step that the model refuses is not a step.
  filterEvents: (snapshot, event) => snapshot.can(event),
});
type Path = TestPath<ModelSnapshot, ModelEvent>;

/** One vertex per fill level of the inbox and of the batch out, and the event that led there: every overflow case is a vertex. */
const byFill = (s: ModelSnapshot, event?: ModelEvent) =>
  JSON.stringify([
    s.value,
    s.context.queue.length,
    s.context.out.length,
    s.context.dropped.length > 0,
    event?.type,
  ]);
/** Coarser, so that simple paths stay few: how full the inbox is, and whether a batch is out. */
const byPhase = (s: ModelSnapshot) => {
  const { queue, out, dropped } = s.context;
  const fill = queue.length === 0 ? 'empty' : queue.length === CAPACITY ? 'full' : 'some';
  return JSON.stringify([s.value, fill, out.length > 0, dropped.length > 0]);
};

const stepsOf = (path: Path) => path.steps.filter((step) => step.event.type !== ('xstate.init' as string));
const describeEvent = (event: ModelEvent): string => {
  switch (event.type) {
    case 'start':
      return event.restored === 0 ? 'start empty' : `start with ${event.restored} restored`;
    case 'offer':
      return `offer ${event.count}`;
    default:
      return event.type;
  }
};

const paths: Path[] = [
  ...testModel.getShortestPaths({ serializeState: byFill }),
  ...testModel.getSimplePaths({ serializeState: byPhase }),
];

/** The model replayed along a path's events: a vertex's stored state may come from another path. */
const replay = (path: Path) => {
  let before: ModelSnapshot = initialTransition(model)[0];
  return stepsOf(path).map((step) => {
    const [after] = transition(model, before, step.event);
    const visit = { event: step.event, generated: step.state, before, after };
    before = after;
    return visit;
  });
};

// ---------------------------------------------------------------------------------------------
// Coverage of the real machine's states and transitions.
// ---------------------------------------------------------------------------------------------

const coverage = new MachineCoverage(inboxMachine);

// ---------------------------------------------------------------------------------------------
// The system under test: the real inboxMachine with in-memory effects.
// ---------------------------------------------------------------------------------------------

const toEvent = (itemId: string): InboxEvent => ({
  id: `ext_${itemId}`,
  source: 'cal',
  item_id: itemId,
  title: `Title of ${itemId}`,
  starts_at: null,
  detail: null,
  received_at: '2026-01-01T00:00:00.000Z',
  attempts: 0,
});
const toItem = (itemId: string): ExternalItem => ({
  itemId,
  title: `Title of ${itemId}`,
  startsAt: null,
  detail: '',
});
const idsOf = (events: readonly InboxEvent[]) => events.map((e) => e.item_id);

class InboxRun {
  readonly recordedDrops: Drop[] = [];
  readonly replies: OfferReply[] = [];
  /** Every event that ever entered the inbox, restored ones included. */
  readonly inserted = new Map<string, InboxEvent>();
  readonly seen = new Set<string>();
  out: InboxEvent[] = [];
  readonly consumed: InboxEvent[] = [];
  listed = 0;
  failAccept = false;
  requests = 0;
  readonly problems: string[] = [];
  actor: ReturnType<InboxRun['create']> | undefined;
  readonly replyTo = createActor(
    fromCallback<OfferReply>(({ receive }) => {
      receive((reply) => this.replies.push(reply));
    }),
  ).start();

  create(restored: InboxEvent[] | Error) {
    const machine = inboxMachine.provide({
      actors: {
        loadInbox: fromPromise(async () => {
          if (restored instanceof Error) throw restored;
          return restored;
        }),
        acceptItems: fromPromise<AcceptOutput, AcceptInput>(async ({ input }) => {
          if (this.failAccept) throw new Error('disk full');
          const unseen = input.items.filter((item) => !this.seen.has(item.itemId));
          const taken = unseen.slice(0, input.limit);
          for (const item of taken) this.seen.add(item.itemId);
          return {
            inserted: taken.map((item) => toEvent(item.itemId)),
            capped: unseen.length > taken.length,
          };
        }),
      },
      actions: {
        recordDrops: (_, { drops }) => {
          this.recordedDrops.push(...drops);
        },
      },
    });
    const actor = createActor(machine, {
      input: { capacity: CAPACITY, perTickCap: PER_TICK_CAP },
      inspect: (event: InspectionEvent) => this.inspect(event),
    });
    return actor;
  }

  inspect(event: InspectionEvent) {
    if (this.actor === undefined || event.actorRef !== this.actor) return;
    coverage.inspect(event);
    if (event.type === '@xstate.microstep' || event.type === '@xstate.snapshot') {
      const snapshot = event.snapshot as SnapshotFrom<typeof inboxMachine>;
      // Capacity is checked on every snapshot, not only between steps.
      if (snapshot.context.events.length > CAPACITY)
        this.problems.push(`${snapshot.context.events.length} events exceed the capacity ${CAPACITY}`);
      const ids = snapshot.context.events.map((e) => e.id);
      if (new Set(ids).size !== ids.length) this.problems.push(`an event is in the inbox twice: ${ids}`);
    }
  }

  get snapshot() {
    return this.actor!.getSnapshot();
  }

  async start(restored: InboxEvent[] | Error) {
    if (!(restored instanceof Error)) for (const event of restored) this.inserted.set(event.id, event);
    this.actor = this.create(restored);
    this.actor.start();
    await waitFor(this.actor, (s) => s.matches('ready'), { timeout: 1000 });
  }

  async offer(count: number) {
    const items = Array.from({ length: count }, (_, i) => toItem(`item-${this.listed + i + 1}`));
    this.listed += count;
    const before = this.snapshot.context.events.length;
    const replies = this.replies.length;
    this.actor!.send({
      type: 'inbox.offer',
      pollId: this.listed,
      source: 'cal',
      items,
      replyTo: this.replyTo,
    });
    await waitFor(this.actor!, (s) => s.matches({ ready: 'idle' }) && s.context.offers.length === 0, {
      timeout: 1000,
    });
    expect(this.replies, 'one reply per offer').toHaveLength(replies + 1);
    const reply = this.replies.at(-1)!;
    const events = this.snapshot.context.events;
    for (const event of events.slice(before)) this.inserted.set(event.id, event);
    return { reply, before, after: events.length };
  }

  drain() {
    const requestId = ++this.requests;
    this.actor!.send({ type: 'inbox.drain', requestId });
    const drain = this.snapshot.context.lastDrain;
    expect(drain?.requestId).toBe(requestId);
    this.out = drain!.events;
    return this.out;
  }

  putBack() {
    const taken = this.out;
    this.out = [];
    this.actor!.send({ type: 'inbox.putBack', events: taken });
    return taken;
  }

  consume() {
    this.consumed.push(...this.out);
    this.out = [];
  }

  stop() {
    this.actor?.stop();
    this.replyTo.stop();
  }
}

/** What must hold after every step, whatever the step was. */
const checkInvariants = (run: InboxRun, expected: ModelContext, where: string) => {
  const { context } = run.snapshot;
  expect(run.problems, where).toEqual([]);
  expect(idsOf(context.events), `${where}: the inbox holds what the model says, in order`).toEqual(
    expected.queue,
  );
  expect(idsOf(run.out), `${where}: the batch out`).toEqual(expected.out);

  const dropIds = run.recordedDrops.map((d) => d.event.item_id);
  expect(new Set(dropIds).size, `${where}: every drop is recorded once`).toBe(dropIds.length);
  expect(dropIds, `${where}: the drops are the put-back events over capacity`).toEqual(expected.dropped);
  expect(run.recordedDrops.every((d) => d.reason === 'overflow')).toBe(true);
  expect(context.dropped, `${where}: the drop count`).toBe(run.recordedDrops.length);

  // Conservation: every event ever inserted is in exactly one place.
  const places = new Map<string, string[]>();
  const put = (events: readonly InboxEvent[], place: string) => {
    for (const event of events) places.set(event.id, [...(places.get(event.id) ?? []), place]);
  };
  put(context.events, 'inbox');
  put(run.out, 'out');
  put(
    run.recordedDrops.map((d) => d.event),
    'dropped',
  );
  put(run.consumed, 'consumed');
  for (const id of run.inserted.keys()) {
    expect(places.get(id), `${where}: ${id} is in exactly one place`).toHaveLength(1);
  }
  expect(
    [...places.keys()].every((id) => run.inserted.has(id)),
    `${where}: nothing appears from nowhere`,
  ).toBe(true);
  expect(context.inserted, `${where}: the inserted count`).toBe(
    [...run.inserted.values()].filter((e) => !e.item_id.startsWith('restored-')).length,
  );
};

const execute = async (run: InboxRun, event: ModelEvent, before: ModelContext, after: ModelContext) => {
  switch (event.type) {
    case 'start':
      await run.start(restoredIds(event.restored).map(toEvent));
      expect(run.snapshot.context.lastError).toBeNull();
      return;
    case 'startBroken':
      await run.start(new Error('the journal is unreadable'));
      expect(run.snapshot.context.lastError).toMatch(
        /Could not restore the inbox: the journal is unreadable/,
      );
      return;
    case 'offer': {
      const { reply, before: size, after: sizeAfter } = await run.offer(event.count);
      const inserted = after.queue.length - before.queue.length;
      expect(reply.inserted, 'the reply counts what entered').toBe(inserted);
      expect(sizeAfter - size).toBe(inserted);
      expect(inserted, 'at most the per-tick cap enters').toBeLessThanOrEqual(PER_TICK_CAP);
      expect(reply.capped, 'capped when a listed item stayed out').toBe(event.count > inserted);
      expect(reply.roomLeft).toBe(CAPACITY - after.queue.length);
      return;
    }
    case 'offerFailing': {
      run.failAccept = true;
      const { reply } = await run.offer(1);
      run.failAccept = false;
      expect(reply).toMatchObject({ inserted: 0, capped: true, roomLeft: 0 });
      expect(run.snapshot.context.lastError).toMatch(/Could not store new items: disk full/);
      return;
    }
    case 'drain': {
      const taken = run.drain();
      expect(idsOf(taken), 'a drain takes everything, in order').toEqual(before.queue);
      expect(run.snapshot.context.events).toEqual([]);
      return;
    }
    case 'putBack': {
      const queued = idsOf(run.snapshot.context.events);
      const drops = run.recordedDrops.length;
      const taken = idsOf(run.putBack());
      const now = idsOf(run.snapshot.context.events);
      const kept = taken.filter((id) => now.includes(id));
      const lost = taken.filter((id) => !now.includes(id));
      expect(now, 'put-back events come first, in the order taken, then the rest').toEqual([
        ...kept,
        ...queued,
      ]);
      expect(
        taken.slice(taken.length - kept.length),
        'the oldest put-back events are the ones dropped',
      ).toEqual(kept);
      expect(
        run.recordedDrops.slice(drops).map((d) => d.event.item_id),
        'each dropped event is recorded',
      ).toEqual(lost);
      return;
    }
    case 'consume':
      run.consume();
      return;
  }
};

// ---------------------------------------------------------------------------------------------

let stepsRun = 0;

afterAll(() => {
  console.log(`inbox model: ${paths.length} paths, ${stepsRun} steps; inboxMachine ${coverage.summary()}`);
});

describe('inbox put-back rules, model-based, against the real inboxMachine', () => {
  it('generates paths that fill the inbox, take every event and overflow on put-back', () => {
    const visited = paths.flatMap((path) => replay(path).map(({ event, after }) => ({ event, after })));
    const fills = new Set(
      visited.map(({ after }) => `${after.context.queue.length}/${after.context.out.length}`),
    );
    for (let queued = 0; queued <= CAPACITY; queued++) expect(fills).toContain(`${queued}/0`);
    expect(new Set(visited.map(({ event }) => describeEvent(event)))).toEqual(
      new Set(EVENTS.map(describeEvent)),
    );
    const overflowing = visited.filter(
      ({ event, after }) => event.type === 'putBack' && after.context.dropped.length > 0,
    );
    expect(overflowing.length, 'some path overflows on put-back').toBeGreaterThan(0);
  });

  describe.each(
    paths.map(
      (path) =>
        [
          stepsOf(path)
            .map((s) => describeEvent(s.event))
            .join(' → '),
          path,
        ] as const,
    ),
  )('%s', (_, path) => {
    it('keeps order, capacity, recorded drops and conservation at every step', async () => {
      const run = new InboxRun();
      try {
        for (const [index, { event, generated, before, after }] of replay(path).entries()) {
          const where = `step ${index + 1} (${describeEvent(event)})`;
          expect(after.value, `${where}: the replay follows the generated path`).toEqual(generated.value);
          await execute(run, event, before.context, after.context);
          if (run.actor) checkInvariants(run, after.context, where);
          stepsRun++;
        }
      } finally {
        run.stop();
      }
    });
  });

  it('has taken every state and every transition of inboxMachine', () => {
    expect(coverage.missingTransitions(), 'every transition of inboxMachine is taken').toEqual([]);
    expect(coverage.missingStates()).toEqual([]);
  });
});
