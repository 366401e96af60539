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
import { inboxMachine } from '../../machines/inbox.js';
import type {
  AcceptInput,
  AcceptOutput,
  DeadLetter,
  LoadedInbox,
  OfferReply,
  Settlement,
  SettlementWrite,
} from '../../machines/inbox-context.js';
import { answerOf, type Reply } from '../../machines/reply.js';
import { createItemAcceptor } from '../../src/effects/accept-items.js';
import { ask } from '../../src/system/ask.js';
import { offerAllSeen } from '../../src/system/wiring.js';
import { exportCoverage, MachineCoverage } from '../support/machine-coverage.js';

/*
 * Model-based test of the inbox's put-back and settlement rules, and of its dedupe: an item is
 * in the inbox at most once, however often it is listed. A small test-only statechart says what
 * the inbox must hold after each step (written here, not borrowed from machines/inbox.ts); paths
 * generated from it with xstate/graph run against the real `inboxMachine` actor, with the real
 * acceptor (src/effects/accept-items.ts) over in-memory stand-ins for the journal and the seen
 * store. The gate's decisions reach it as `inbox.settle` (consumed, put back with one more
 * attempt, out of attempts); a small capacity makes put-backs overflow.
 */

const CAPACITY = 4;
const PER_TICK_CAP = 2;
const RESTORED = 2;
/** When the settlement numbered `seq` was decided. */
const settledAt = (seq: number) => Date.UTC(2026, 0, 1) + seq * 1_000;

type Kind = 'putBack' | 'consume' | 'deadLetter' | 'settleMixed' | 'consumeUnsaved';

type ModelEvent =
  | { type: 'start'; restored: number }
  | { type: 'startBroken' }
  | { type: 'offer'; count: number }
  | { type: 'offerFailing' }
  /** A poll lists again only items the inbox has seen: answered at once, nothing written. */
  | { type: 'offerSeen' }
  /**
   * A poll lists every item that ever entered, each twice, and one new item twice, while the
   * seen store has forgotten the items the inbox holds, queued or out with the gate (as the old
   * store did seven days after an item first entered): only the new item enters, once.
   */
  | { type: 'offerRepeats' }
  | { type: 'drain' }
  /** The batch out comes back, one more attempt each. */
  | { type: 'putBack' }
  /** The batch out is dealt with. */
  | { type: 'consume' }
  /** The batch out is out of attempts. */
  | { type: 'deadLetter' }
  /** The batch out, in turn: put back, out of attempts, consumed, put back... */
  | { type: 'settleMixed' }
  /** The batch out is dealt with, but the settlement cannot be written. */
  | { type: 'consumeUnsaved' };

interface DeadEntry {
  id: string;
  reason: DeadLetter['reason'];
}

interface ModelContext {
  /** Items listed so far, so every offer lists fresh ones. */
  listed: number;
  /** Item ids in the inbox, front first. */
  queue: string[];
  /** Item ids of the last drain, not yet settled. */
  out: string[];
  consumed: string[];
  /** The dead letters of this run, in the order recorded. */
  dead: DeadEntry[];
  /** Settlements sent, the highest one written, and the last one that could not be. */
  seq: number;
  saved: number;
  failed: number | null;
}

const restoredIds = (n: number) => Array.from({ length: n }, (_, i) => `restored-${i + 1}`);
/** Every item that entered the inbox so far, wherever it is now. */
const enteredIds = (context: ModelContext) => [
  ...context.queue,
  ...context.out,
  ...context.consumed,
  ...context.dead.map((d) => d.id),
];

/** Where the event at `index` of the batch out goes in a settlement of this kind. */
const fateOf = (kind: Kind, index: number): 'consume' | 'putBack' | 'deadLetter' => {
  if (kind === 'settleMixed') return (['putBack', 'deadLetter', 'consume'] as const)[index % 3]!;
  return kind === 'consumeUnsaved' ? 'consume' : kind;
};

/**
 * A settlement, as PulseAgent 0.1.0 (the prototype pulse grew from) states the rules: put-back events go to the front in the order
 * taken, and when that overflows the capacity the put-back (oldest) ones are dropped first,
 * recorded after the ones out of attempts.
 */
const settle = (context: ModelContext, kind: Kind): Partial<ModelContext> => {
  const fate = (_id: string, index: number) => fateOf(kind, index);
  const back = context.out.filter((id, i) => fate(id, i) === 'putBack');
  const overflow = Math.max(0, back.length + context.queue.length - CAPACITY);
  const seq = context.seq + 1;
  return {
    queue: [...back.slice(overflow), ...context.queue],
    out: [],
    consumed: [...context.consumed, ...context.out.filter((id, i) => fate(id, i) === 'consume')],
    dead: [
      ...context.dead,
      ...context.out
        .filter((id, i) => fate(id, i) === 'deadLetter')
        .map((id) => ({ id, reason: 'max_attempts' as const })),
      ...back.slice(0, overflow).map((id) => ({ id, reason: 'overflow' as const })),
    ],
    seq,
    saved: kind === 'consumeUnsaved' ? context.saved : seq,
    failed: kind === 'consumeUnsaved' ? seq : context.failed,
  };
};

const model = setup({
  types: { context: {} as ModelContext, events: {} as ModelEvent },
  guards: {
    hasOut: ({ context }) => context.out.length > 0,
  },
  actions: {
    settle: assign(({ context, event }) => settle(context, event.type as Kind)),
  },
}).createMachine({
  id: 'inboxModel',
  context: { listed: 0, queue: [], out: [], consumed: [], dead: [], seq: 0, saved: 0, failed: null },
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
        // Changes nothing; the action only makes the step a transition the graph can take.
        offerSeen: { actions: assign(({ context }) => ({ listed: context.listed })) },
        offerRepeats: {
          actions: assign(({ context }) => {
            const fresh = `item-${context.listed + 1}`;
            const limit = Math.min(PER_TICK_CAP, CAPACITY - context.queue.length);
            return {
              listed: context.listed + 1,
              queue: limit > 0 ? [...context.queue, fresh] : context.queue,
            };
          }),
        },
        drain: {
          guard: ({ context }) => context.out.length === 0,
          actions: assign(({ context }) => ({ queue: [], out: context.queue })),
        },
        putBack: { guard: 'hasOut', actions: 'settle' },
        consume: { guard: 'hasOut', actions: 'settle' },
        deadLetter: { guard: 'hasOut', actions: 'settle' },
        settleMixed: { guard: 'hasOut', actions: 'settle' },
        consumeUnsaved: { guard: 'hasOut', actions: 'settle' },
      },
    },
  },
});

type ModelSnapshot = SnapshotFrom<typeof model>;

/** The steps of PulseAgent 0.1.0's put-back rules: every simple path over them is run. */
const PUT_BACK_EVENTS: ModelEvent[] = [
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
/** And the other settlements: taken at every fill level, not along every simple path. */
const EVENTS: ModelEvent[] = [
  ...PUT_BACK_EVENTS,
  { type: 'offerSeen' },
  { type: 'offerRepeats' },
  { type: 'deadLetter' },
  { type: 'settleMixed' },
  { type: 'consumeUnsaved' },
];

const filterEvents = (snapshot: ModelSnapshot, event: ModelEvent) => snapshot.can(event);
type Path = TestPath<ModelSnapshot, ModelEvent>;

/** One vertex per fill level of the inbox and of the batch out, the kinds of dead letters so far, and the event that led there: every overflow case is a vertex. */
const byFill = (s: ModelSnapshot, event?: ModelEvent) =>
  JSON.stringify([
    s.value,
    s.context.queue.length,
    s.context.out.length,
    [...new Set(s.context.dead.map((d) => d.reason))].sort(),
    event?.type,
  ]);
/** Coarser, so that simple paths stay few: how full the inbox is, and whether a batch is out. */
const byPhase = (s: ModelSnapshot) => {
  const { queue, out, dead } = s.context;
  const fill = queue.length === 0 ? 'empty' : queue.length === CAPACITY ? 'full' : 'some';
  return JSON.stringify([s.value, fill, out.length > 0, dead.length > 0]);
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
  ...createTestModel(model, { events: EVENTS, filterEvents }).getShortestPaths({ serializeState: byFill }),
  // Repeats are taken at every fill level by the shortest paths; left out here, they would double the simple paths.
  ...createTestModel(model, {
    events: PUT_BACK_EVENTS,
    filterEvents: (snapshot, event) => event.type !== 'offerRepeats' && filterEvents(snapshot, event),
  }).getSimplePaths({ serializeState: byPhase }),
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
/** A dead letter restored with the inbox: written before this run, kept in view. */
const RESTORED_DEAD: DeadLetter = {
  at: '2025-12-31T00:00:00.000Z',
  reason: 'max_attempts',
  event: { ...toEvent('restored-dead'), attempts: 5 },
};
const WRITE_ERROR = 'EROFS: read-only file system';

class InboxRun {
  /** What the inbox handed to `persistSettlement`, in order. */
  readonly persisted: SettlementWrite[] = [];
  restoredDead: DeadLetter[] = [];
  readonly replies: OfferReply[] = [];
  /** Every event that ever entered the inbox, restored ones included. */
  readonly inserted = new Map<string, InboxEvent>();
  /** The seen store's marks (one source): item ids. */
  readonly seen = new Set<string>();
  out: InboxEvent[] = [];
  listed = 0;
  failAccept = false;
  failWrite = false;
  /** Offers that reached acceptItems (a write). */
  writes = 0;
  /** The real acceptor, over a journal that keeps nothing (the actor's context is the inbox) and the marks above. */
  readonly accept = createItemAcceptor({
    inbox: {
      insert: async () => {
        if (this.failAccept) throw new Error('disk full');
        this.writes++;
      },
    },
    seen: {
      has: (_source, itemId) => this.seen.has(itemId),
      mark: async (_source, itemIds) => {
        for (const id of itemIds) this.seen.add(id);
      },
      // One source: no item of its server was listed by another first.
      firstListedBy: () => null,
      markOnServer: async () => {},
    },
    storeDetail: () => false,
  });
  seq = 0;
  /** The last settlement that could not be written, and what its ack was told. */
  lastFailed: { seq: number; error: string } | null = null;
  /** The acks' replies, by settlement: each settlement here records one ack. */
  readonly settled = new Map<number, Reply<number>>();
  readonly ackReplyTo = createActor(
    fromCallback<Reply<number>>(({ receive }) => {
      receive((reply) => this.settled.set(reply.requestId, reply));
    }),
  ).start();
  readonly problems: string[] = [];
  actor: ReturnType<InboxRun['create']> | undefined;
  readonly replyTo = createActor(
    fromCallback<OfferReply>(({ receive }) => {
      receive((reply) => this.replies.push(reply));
    }),
  ).start();

  create(restored: LoadedInbox | Error) {
    const machine = inboxMachine.provide({
      actors: {
        loadInbox: fromPromise<LoadedInbox>(async () => {
          if (restored instanceof Error) throw restored;
          return restored;
        }),
        acceptItems: fromPromise<AcceptOutput, AcceptInput>(({ input }) => this.accept(input)),
        // Written, or not, a tick later, as a file write would be.
        persistSettlement: fromPromise<void, SettlementWrite>(async ({ input }) => {
          this.persisted.push(input);
          const fail = this.failWrite;
          await Promise.resolve();
          if (fail) throw new Error(WRITE_ERROR);
        }),
      },
      // The production guard, over this run's seen set (every offer here comes from one source).
      guards: { offerAllSeen: offerAllSeen((_source, itemId) => this.seen.has(itemId)) },
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
      const held = [...snapshot.context.events, ...this.out].map((e) => `${e.source}/${e.item_id}`);
      if (new Set(held).size !== held.length) this.problems.push(`an item is held twice: ${held}`);
    }
  }

  get snapshot() {
    return this.actor!.getSnapshot();
  }

  async start(restored: LoadedInbox | Error) {
    if (!(restored instanceof Error)) {
      // The loader marks seen every item the journal records as inserted.
      for (const event of restored.events) {
        this.inserted.set(event.id, event);
        this.seen.add(event.item_id);
      }
      this.restoredDead = restored.deadLetters;
    }
    this.actor = this.create(restored);
    this.actor.start();
    await waitFor(this.actor, (s) => s.matches('ready'), { timeout: 1000 });
  }

  async offer(count: number) {
    const items = Array.from({ length: count }, (_, i) => toItem(`item-${this.listed + i + 1}`));
    this.listed += count;
    return this.offerItems(items);
  }

  async offerItems(items: ReturnType<typeof toItem>[]) {
    const before = this.snapshot.context.events.length;
    const replies = this.replies.length;
    this.actor!.send({
      type: 'inbox.offer',
      pollId: this.listed,
      source: 'cal',
      server: 'cal-server',
      items,
      replyTo: this.replyTo,
    });
    await waitFor(
      this.actor!,
      (s) => s.matches({ ready: { offers: 'idle' } }) && s.context.offers.length === 0,
      {
        timeout: 1000,
      },
    );
    expect(this.replies, 'one reply per offer').toHaveLength(replies + 1);
    const reply = this.replies.at(-1)!;
    const events = this.snapshot.context.events;
    for (const event of events.slice(before)) this.inserted.set(event.id, event);
    return { reply, before, after: events.length };
  }

  async drain() {
    this.out = await ask(this.actor!, (asking) => ({ type: 'inbox.drain', ...asking }));
    return this.out;
  }

  /** Sends the batch out back to the inbox as the gate would, and waits until the write is answered. */
  async settle(kind: Kind) {
    const taken = this.out.map((event, index) => ({ event, fate: fateOf(kind, index) }));
    const failed = (f: string) =>
      taken.filter((t) => t.fate === f).map((t) => ({ ...t.event, attempts: t.event.attempts + 1 }));
    const settlement: Settlement = {
      seq: ++this.seq,
      at: settledAt(this.seq),
      consumed: taken.filter((t) => t.fate === 'consume').map((t) => t.event.id),
      putBack: failed('putBack'),
      deadLettered: failed('deadLetter'),
    };
    this.out = [];
    this.failWrite = kind === 'consumeUnsaved';
    const reply = answerOf({ requestId: settlement.seq, replyTo: this.ackReplyTo }, settlement.seq);
    this.actor!.send({ type: 'inbox.settle', ...settlement, reply });
    this.failWrite = false;
    expect(this.persisted.at(-1)?.settlement, 'the settlement is handed to the effect as it came').toEqual(
      settlement,
    );
    await waitFor(this.actor!, () => this.settled.has(settlement.seq), { timeout: 1000 });
    const heard = this.settled.get(settlement.seq)!;
    if ('error' in heard) this.lastFailed = { seq: settlement.seq, error: heard.error };
    else expect(heard.answer, 'the ack is answered once its settlement is written').toBe(settlement.seq);
    return settlement;
  }

  stop() {
    this.actor?.stop();
    this.replyTo.stop();
    this.ackReplyTo.stop();
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
  expect(idsOf(context.out), `${where}: the inbox knows what is out`).toEqual(expected.out);

  // Dead letters: handed to the effect with their settlement, and in the inbox's view.
  const dead = run.persisted.flatMap((p) => p.deadLetters);
  const deadIds = dead.map((d) => d.event.item_id);
  expect(new Set(deadIds).size, `${where}: every dead letter is recorded once`).toBe(deadIds.length);
  expect(
    dead.map((d) => ({ id: d.event.item_id, reason: d.reason })),
    `${where}: the dead letters, out of attempts then overflowing, in order`,
  ).toEqual(expected.dead);
  for (const { settlement, deadLetters } of run.persisted) {
    expect(
      deadLetters.filter((d) => d.reason === 'max_attempts').map((d) => d.event),
      `${where}: settlement ${settlement.seq} records its events out of attempts`,
    ).toEqual(settlement.deadLettered);
    expect(
      deadLetters.every((d) => d.at === new Date(settlement.at).toISOString()),
      `${where}: dead letters carry the settlement's time`,
    ).toBe(true);
    const backIds = new Set(settlement.putBack.map((e) => e.id));
    expect(
      deadLetters.filter((d) => d.reason === 'overflow').every((d) => backIds.has(d.event.id)),
      `${where}: only put-back events overflow`,
    ).toBe(true);
  }
  expect(context.deadLetters, `${where}: the dead letters in view, restored ones first`).toEqual([
    ...run.restoredDead,
    ...dead,
  ]);
  expect(context.deadLettered, `${where}: the dead-letter count`).toBe(dead.length);
  expect(context.dropped, `${where}: the overflow count`).toBe(
    expected.dead.filter((d) => d.reason === 'overflow').length,
  );

  // The answers of the writes: each settlement written once, in the order decided.
  expect(
    run.persisted.map((p) => p.settlement.seq),
    `${where}: settlements handed to the effect in order`,
  ).toEqual(Array.from({ length: expected.seq }, (_, i) => i + 1));
  expect(context.unsaved, `${where}: every settlement taken is written, or failed`).toEqual([]);
  expect(context.settleSaved, `${where}: the highest settlement written`).toBe(expected.saved);
  if (expected.failed === null) expect(run.lastFailed, where).toBeNull();
  else {
    expect(run.lastFailed, `${where}: the settlement not written, and its ack told why`).toEqual({
      seq: expected.failed,
      error: `The ack was accepted but could not be written to inbox.jsonl: ${WRITE_ERROR}. Check that .pulse/ is writable.`,
    });
    expect(context.lastError).toContain(WRITE_ERROR);
  }

  // Conservation: every event ever inserted is in exactly one place.
  const places = new Map<string, string[]>();
  const put = (ids: readonly string[], place: string) => {
    for (const id of ids) places.set(id, [...(places.get(id) ?? []), place]);
  };
  put(
    context.events.map((e) => e.id),
    'inbox',
  );
  put(
    run.out.map((e) => e.id),
    'out',
  );
  put(
    dead.map((d) => d.event.id),
    'dead letter',
  );
  put(
    run.persisted.flatMap((p) => p.settlement.consumed),
    'consumed',
  );
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
      await run.start({
        events: restoredIds(event.restored).map(toEvent),
        deadLetters: event.restored > 0 ? [RESTORED_DEAD] : [],
      });
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
    case 'offerSeen': {
      const writes = run.writes;
      const {
        reply,
        before: size,
        after: sizeAfter,
      } = await run.offerItems([...run.seen].slice(-2).map((id) => toItem(id)));
      expect(reply).toMatchObject({ inserted: 0, capped: false, roomLeft: CAPACITY - after.queue.length });
      expect(sizeAfter).toBe(size);
      expect(run.writes, 'nothing written for items seen before').toBe(writes);
      return;
    }
    case 'offerRepeats': {
      for (const id of [...before.queue, ...before.out]) run.seen.delete(id);
      const fresh = toItem(`item-${run.listed + 1}`);
      run.listed += 1;
      const again = enteredIds(before).map(toItem);
      const { reply } = await run.offerItems([...again, fresh, ...again, fresh]);
      expect(run.problems, 'no item listed again is in the inbox twice').toEqual([]);
      const inserted = after.queue.length - before.queue.length;
      expect(reply, 'only the new item enters, once').toMatchObject({ inserted, capped: inserted === 0 });
      expect(
        again.every((item) => run.seen.has(item.itemId)),
        'every item listed again is marked seen again',
      ).toBe(true);
      return;
    }
    case 'drain': {
      const taken = await run.drain();
      expect(idsOf(taken), 'a drain takes everything, in order').toEqual(before.queue);
      expect(run.snapshot.context.events).toEqual([]);
      return;
    }
    case 'putBack':
    case 'settleMixed': {
      const queued = idsOf(run.snapshot.context.events);
      const deadBefore = run.persisted.flatMap((p) => p.deadLetters).length;
      const settlement = await run.settle(event.type);
      const taken = idsOf(settlement.putBack);
      const now = run.snapshot.context.events;
      const kept = taken.filter((id) => idsOf(now).includes(id));
      const lost = taken.filter((id) => !idsOf(now).includes(id));
      expect(idsOf(now), 'put-back events come first, in the order taken, then the rest').toEqual([
        ...kept,
        ...queued,
      ]);
      expect(
        now.slice(0, kept.length).map((e) => e.attempts),
        'with one more attempt each',
      ).toEqual(settlement.putBack.filter((e) => kept.includes(e.item_id)).map((e) => e.attempts));
      expect(
        taken.slice(taken.length - kept.length),
        'the oldest put-back events are the ones dropped',
      ).toEqual(kept);
      const recorded = run.persisted.flatMap((p) => p.deadLetters).slice(deadBefore);
      expect(
        recorded.filter((d) => d.reason === 'overflow').map((d) => d.event.item_id),
        'each dropped event is recorded as overflow',
      ).toEqual(lost);
      return;
    }
    case 'consume':
    case 'deadLetter':
    case 'consumeUnsaved': {
      const queued = run.snapshot.context.events;
      await run.settle(event.type);
      expect(run.snapshot.context.events, 'the rest of the inbox is left alone').toEqual(queued);
      return;
    }
  }
};

// ---------------------------------------------------------------------------------------------

let stepsRun = 0;

afterAll(() => exportCoverage(coverage.record('inbox', 'inbox.model', 'in-process')));

afterAll(() => {
  console.log(`inbox model: ${paths.length} paths, ${stepsRun} steps; inboxMachine ${coverage.summary()}`);
});

describe('inbox put-back and settlement rules, model-based, against the real inboxMachine', () => {
  it('generates paths that fill the inbox, take every event, overflow on put-back and dead-letter', () => {
    const visited = paths.flatMap((path) => replay(path));
    const fills = new Set(
      visited.map(({ after }) => `${after.context.queue.length}/${after.context.out.length}`),
    );
    for (let queued = 0; queued <= CAPACITY; queued++) expect(fills).toContain(`${queued}/0`);
    expect(new Set(visited.map(({ event }) => describeEvent(event)))).toEqual(
      new Set(EVENTS.map(describeEvent)),
    );
    const overflowing = (type: ModelEvent['type']) =>
      visited.filter(
        ({ event, after }) => event.type === type && after.context.dead.some((d) => d.reason === 'overflow'),
      );
    expect(overflowing('putBack').length, 'some path overflows on put-back').toBeGreaterThan(0);
    expect(overflowing('settleMixed').length, 'some mixed settlement overflows').toBeGreaterThan(0);
    const bothKinds = visited.some(({ event, before, after }) => {
      const fresh = after.context.dead.slice(before.context.dead.length).map((d) => d.reason);
      return event.type === 'settleMixed' && fresh.includes('max_attempts') && fresh.includes('overflow');
    });
    expect(bothKinds, 'some settlement dead-letters for both reasons at once').toBe(true);
    const repeats = visited
      .filter(({ event }) => event.type === 'offerRepeats')
      .map(({ before }) => before.context);
    expect(
      repeats.some((c) => c.queue.length > 0 && c.out.length > 0),
      'some repeat lists items queued and out at once',
    ).toBe(true);
    expect(
      repeats.some((c) => c.consumed.length > 0 && c.dead.length > 0),
      'some repeat lists consumed and dead-lettered items',
    ).toBe(true);
    expect(
      repeats.some((c) => c.queue.length === CAPACITY),
      'some repeat finds the inbox full',
    ).toBe(true);
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
    it('keeps order, capacity, recorded dead letters and conservation at every step', async () => {
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
