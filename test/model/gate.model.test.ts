import { afterAll, describe, expect, it } from 'vitest';
import {
  type ActorRefFrom,
  assign,
  createActor,
  fromCallback,
  fromPromise,
  type InspectionEvent,
  initialTransition,
  SimulatedClock,
  type SnapshotFrom,
  setup,
  transition,
  waitFor,
} from 'xstate';
import { createTestModel, type TestPath } from 'xstate/graph';
import type { InboxEvent } from '../../machines/external.js';
import { type Delivery, drainFromInbox, gateMachine, type Judgement } from '../../machines/gate.js';
import { type AcceptInput, type AcceptOutput, inboxMachine, type OfferReply } from '../../machines/inbox.js';
import { MachineCoverage } from '../helpers/machine-coverage.js';

/*
 * Model-based test of the gate's put-back and consumption rules. A small test-only statechart
 * says where every event must be after each step (inbox, out, consumed, dead letter); paths
 * generated from it with xstate/graph run against the real gateMachine and the real inboxMachine
 * in one system, on a simulated clock, with in-memory effects and a scripted thinker.
 */

const MAX_ATTEMPTS = 2;
const MAX_EVENTS = 2;
const LEASE_MS = 10_000;
const COOLDOWN_MS = 5_000;
const FOCUS_UNTIL = 10 ** 12;

/** How the thinker answers: urgent, not urgent, a throw, or an answer covering no event. */
type Mode = 'speak' | 'quiet' | 'fail' | 'empty';
type Phase = 'idle' | 'awaiting' | 'cooldown';
type Outcome = 'told' | 'not_worth_saying' | 'later' | 'lease_expired' | 'thinker_failed' | 'gated';

type ModelEvent =
  | { type: 'insert' }
  | { type: 'reflect'; mode: Mode }
  | { type: 'ack'; outcome: 'told' | 'not_worth_saying' | 'later' }
  | { type: 'ackStale' }
  | { type: 'ackUnknown' }
  | { type: 'leaseExpires' }
  | { type: 'cooldownEnds' }
  | { type: 'focus'; on: boolean }
  | { type: 'replan'; pending: boolean };

interface Slot {
  id: string;
  attempts: number;
}

interface ModelContext {
  phase: Phase;
  inserted: number;
  queue: Slot[];
  out: Slot[];
  consumed: string[];
  dead: string[];
  focus: boolean;
  answering: boolean;
  deferred: boolean;
  mode: Mode;
  /** A delivery has been closed (acknowledged or expired), so a stale ack can be sent. */
  closedAny: boolean;
  /** What the last step did to events, and under which gates (`later @ awaiting+focus`), for the coverage. */
  outcomes: string[];
}

const retry = (ctx: ModelContext, slots: Slot[]) => {
  const bumped = slots.map((s) => ({ ...s, attempts: s.attempts + 1 }));
  return {
    queue: [...bumped.filter((s) => s.attempts < MAX_ATTEMPTS), ...ctx.queue],
    dead: [...ctx.dead, ...bumped.filter((s) => s.attempts >= MAX_ATTEMPTS).map((s) => s.id)],
  };
};

/** A reflection that passed every gate, with the thinker in `mode`. */
const reflect = (ctx: ModelContext): ModelContext => {
  const next = { ...ctx, deferred: false };
  if (ctx.queue.length === 0) return next;
  switch (ctx.mode) {
    case 'speak':
      return { ...next, phase: 'awaiting', out: ctx.queue, queue: [] };
    case 'quiet':
      return { ...next, consumed: [...ctx.consumed, ...ctx.queue.map((s) => s.id)], queue: [] };
    case 'fail':
    case 'empty':
      return {
        ...next,
        ...retry({ ...next, queue: [] }, ctx.queue),
        outcomes: [...ctx.outcomes, `${'thinker_failed' satisfies Outcome} (${ctx.mode})`],
      };
  }
};

/** In idle, a held reflection runs as soon as focus and answering are off. */
const settle = (ctx: ModelContext): ModelContext =>
  ctx.phase === 'idle' && ctx.deferred && !ctx.focus && !ctx.answering ? reflect(ctx) : ctx;

const gatesOf = (c: ModelContext) => `${c.phase}${c.focus ? '+focus' : ''}${c.answering ? '+answering' : ''}`;

const step = (ctx: ModelContext, event: ModelEvent): ModelContext => {
  const after = apply(ctx, event);
  return { ...after, outcomes: after.outcomes.map((o) => `${o} @ ${gatesOf(ctx)}`) };
};

const apply = (ctx: ModelContext, event: ModelEvent): ModelContext => {
  const c = { ...ctx, outcomes: [] as string[] };
  switch (event.type) {
    case 'insert':
      return {
        ...c,
        inserted: c.inserted + 1,
        queue: [...c.queue, { id: `item-${c.inserted + 1}`, attempts: 0 }],
      };
    case 'reflect': {
      const withMode = { ...c, mode: event.mode };
      const gated = c.phase !== 'idle' || c.focus || c.answering;
      if (gated) return { ...withMode, deferred: true, outcomes: ['gated'] };
      return reflect(withMode);
    }
    case 'ack': {
      const done = event.outcome === 'later' ? [] : c.out.map((s) => s.id);
      const back = event.outcome === 'later' ? c.out : [];
      return {
        ...c,
        ...retry(c, back),
        phase: 'cooldown',
        out: [],
        consumed: [...c.consumed, ...done],
        closedAny: true,
        outcomes: [event.outcome],
      };
    }
    case 'leaseExpires':
      return settle({
        ...c,
        ...retry(c, c.out),
        phase: 'idle',
        out: [],
        closedAny: true,
        outcomes: ['lease_expired'],
      });
    case 'cooldownEnds':
      return settle({ ...c, phase: 'idle' });
    case 'focus':
      return settle({ ...c, focus: event.on });
    case 'replan':
      return settle({ ...c, answering: event.pending });
    case 'ackStale':
    case 'ackUnknown':
      return c;
  }
};

const model = setup({
  types: { context: {} as ModelContext, events: {} as ModelEvent },
  guards: {
    canInsert: ({ context }) => context.inserted < MAX_EVENTS,
    isAwaiting: ({ context }) => context.phase === 'awaiting',
    isCooling: ({ context }) => context.phase === 'cooldown',
    hasClosed: ({ context }) => context.closedAny,
    changesFocus: ({ context, event }) => event.type === 'focus' && event.on !== context.focus,
    changesReplan: ({ context, event }) => event.type === 'replan' && event.pending !== context.answering,
  },
  actions: { step: assign(({ context, event }) => step(context, event)) },
}).createMachine({
  id: 'gateModel',
  context: {
    phase: 'idle',
    inserted: 0,
    queue: [],
    out: [],
    consumed: [],
    dead: [],
    focus: false,
    answering: false,
    deferred: false,
    mode: 'speak',
    closedAny: false,
    outcomes: [],
  },
  on: {
    insert: { guard: 'canInsert', actions: 'step' },
    reflect: { actions: 'step' },
    ack: { guard: 'isAwaiting', actions: 'step' },
    ackStale: { guard: 'hasClosed', actions: 'step' },
    ackUnknown: { actions: 'step' },
    leaseExpires: { guard: 'isAwaiting', actions: 'step' },
    cooldownEnds: { guard: 'isCooling', actions: 'step' },
    focus: { guard: 'changesFocus', actions: 'step' },
    replan: { guard: 'changesReplan', actions: 'step' },
  },
});

type ModelSnapshot = SnapshotFrom<typeof model>;

const EVENTS: ModelEvent[] = [
  { type: 'insert' },
  { type: 'reflect', mode: 'speak' },
  { type: 'reflect', mode: 'quiet' },
  { type: 'reflect', mode: 'fail' },
  { type: 'reflect', mode: 'empty' },
  { type: 'ack', outcome: 'told' },
  { type: 'ack', outcome: 'not_worth_saying' },
  { type: 'ack', outcome: 'later' },
  { type: 'ackStale' },
  { type: 'ackUnknown' },
  { type: 'leaseExpires' },
  { type: 'cooldownEnds' },
  { type: 'focus', on: true },
  { type: 'focus', on: false },
  { type: 'replan', pending: true },
  { type: 'replan', pending: false },
];

const describeEvent = (e: ModelEvent): string => {
  switch (e.type) {
    case 'reflect':
      return `reflect(${e.mode})`;
    case 'ack':
      return `ack(${e.outcome})`;
    case 'focus':
      return e.on ? 'focus on' : 'focus off';
    case 'replan':
      return e.pending ? 'replan pending' : 'replan answered';
    default:
      return e.type;
  }
};

const testModel = createTestModel(model, {
  events: EVENTS,
  filterEvents: (snapshot, event) => snapshot.can(event),
});
type Path = TestPath<ModelSnapshot, ModelEvent>;

/**
 * Where every event is, which gates are on, and the step that led there (so that each outcome
 * under each gate is a vertex of its own): the mode matters only while a reflection is held.
 */
const byPlacement = (s: ModelSnapshot, event?: ModelEvent) => {
  const c = s.context;
  return JSON.stringify([
    event?.type === 'ackUnknown' || event?.type === 'ackStale' ? event.type : null,
    c.outcomes,
    c.phase,
    c.queue,
    c.out,
    c.consumed.length,
    c.dead.length,
    c.focus,
    c.answering,
    c.deferred ? c.mode : null,
  ]);
};

const paths: Path[] = testModel.getShortestPaths({ serializeState: byPlacement });
const stepsOf = (path: Path) => path.steps.filter((s) => s.event.type !== ('xstate.init' as string));

const replay = (path: Path) => {
  let before: ModelSnapshot = initialTransition(model)[0];
  return stepsOf(path).map((s) => {
    const [after] = transition(model, before, s.event);
    const visit = { event: s.event, before, after };
    before = after;
    return visit;
  });
};

// ---------------------------------------------------------------------------------------------
// Coverage of the real gate's states and transitions.
// ---------------------------------------------------------------------------------------------

const coverage = new MachineCoverage(gateMachine);

// ---------------------------------------------------------------------------------------------
// The system under test: the real inbox and gate, with in-memory effects.
// ---------------------------------------------------------------------------------------------

const slotsOf = (events: readonly InboxEvent[]): Slot[] =>
  events.map((e) => ({ id: e.item_id, attempts: e.attempts }));

class GateRun {
  readonly clock = new SimulatedClock();
  readonly consumed: string[] = [];
  readonly dead: InboxEvent[] = [];
  readonly deliveries: Delivery[] = [];
  readonly problems: string[] = [];
  mode: Mode = 'speak';
  listed = 0;
  requests = 0;
  gateRef: ReturnType<GateRun['gate']> | undefined;

  private readonly replyTo = createActor(fromCallback<OfferReply>(() => {})).start();

  readonly root = createActor(
    setup({
      actors: {
        inbox: inboxMachine.provide({
          actors: {
            loadInbox: fromPromise(async () => [] as InboxEvent[]),
            acceptItems: fromPromise<AcceptOutput, AcceptInput>(async ({ input }) => ({
              inserted: input.items.slice(0, input.limit).map((item) => ({
                id: item.itemId,
                source: input.source,
                item_id: item.itemId,
                title: item.title,
                starts_at: null,
                detail: null,
                received_at: '2026-01-01T00:00:00.000Z',
                attempts: 0,
              })),
              capped: false,
            })),
          },
          // The model takes inserts and reflections as separate steps: an insert must not wake the gate.
          actions: { wakeGate: () => {} },
        }),
        gate: gateMachine.provide({
          actors: {
            drainInbox: fromPromise(async ({ input, system }) => ({
              events: await drainFromInbox(system, input.requestId),
              at: this.clock.now(),
            })),
            think: fromPromise<Judgement[], { events: InboxEvent[]; now: number }>(async ({ input }) => {
              if (this.mode === 'fail') throw new Error('the thinker failed');
              if (this.mode === 'empty') return [];
              const urgency = this.mode === 'speak' ? 0.9 : 0.1;
              return input.events.map((e) => ({ id: e.id, urgency }));
            }),
          },
          actions: {
            consume: (_, { ids }) => {
              for (const id of ids) {
                if (this.consumed.includes(id)) this.problems.push(`${id} consumed twice`);
              }
              this.consumed.push(...ids);
            },
            recordDeadLetters: (_, { events }) => {
              this.dead.push(...events);
            },
            announceDelivery: (_, { delivery }) => {
              for (const e of delivery.events) {
                if (this.consumed.includes(e.id))
                  this.problems.push(`${e.id} delivered after it was consumed`);
              }
              this.deliveries.push(delivery);
            },
          },
        }),
      },
    }).createMachine({
      invoke: [
        { src: 'inbox', id: 'inbox', systemId: 'inbox', input: {} },
        {
          src: 'gate',
          id: 'gate',
          systemId: 'gate',
          input: {
            leaseMs: LEASE_MS,
            cooldownMs: COOLDOWN_MS,
            maxAttempts: MAX_ATTEMPTS,
            reflectEveryMs: 10 ** 12,
          },
        },
      ],
    }),
    { clock: this.clock, inspect: (e) => this.inspect(e) },
  );

  gate() {
    return this.root.system.get('gate') as ActorRefFrom<typeof gateMachine>;
  }

  inbox() {
    return this.root.system.get('inbox') as ActorRefFrom<typeof inboxMachine>;
  }

  inspect(event: InspectionEvent) {
    if (this.gateRef === undefined || event.actorRef !== this.gateRef) return;
    coverage.inspect(event);
  }

  async start() {
    this.root.start();
    this.gateRef = this.gate();
    coverage.visit(this.gateRef.getSnapshot().value);
    await waitFor(this.inbox(), (s) => s.matches({ ready: 'idle' }), { timeout: 1000 });
  }

  async settle() {
    await waitFor(this.gate(), (s) => !s.matches('reflecting') && !s.matches('thinking'), { timeout: 1000 });
    await waitFor(this.inbox(), (s) => s.matches({ ready: 'idle' }) && s.context.offers.length === 0, {
      timeout: 1000,
    });
  }

  lastClosedId(): string {
    const closed = this.gate().getSnapshot().context.closed;
    return closed.at(-1)!.deliveryId;
  }

  async execute(event: ModelEvent) {
    const gate = this.gate();
    switch (event.type) {
      case 'insert': {
        this.listed++;
        this.inbox().send({
          type: 'inbox.offer',
          pollId: this.listed,
          source: 'cal',
          items: [
            { itemId: `item-${this.listed}`, title: `Item ${this.listed}`, startsAt: null, detail: '' },
          ],
          replyTo: this.replyTo,
        });
        break;
      }
      case 'reflect':
        this.mode = event.mode;
        gate.send({ type: 'gate.reflect', reason: 'inserted' });
        break;
      case 'ack': {
        const delivery = gate.getSnapshot().context.delivery!;
        const outcomes = Object.fromEntries(delivery.events.map((e) => [e.id, event.outcome]));
        gate.send({
          type: 'gate.ack',
          requestId: ++this.requests,
          deliveryId: delivery.deliveryId,
          ...(event.outcome === 'told' ? {} : { outcomes }),
          now: this.clock.now(),
        });
        expect(gate.getSnapshot().context.lastReply).toMatchObject({
          accepted: true,
          requestId: this.requests,
        });
        break;
      }
      case 'ackStale': {
        const deliveryId = this.lastClosedId();
        const before = gate.getSnapshot();
        gate.send({ type: 'gate.ack', requestId: ++this.requests, deliveryId, now: this.clock.now() });
        const reply = gate.getSnapshot().context.lastReply!;
        expect(reply.accepted).toBe(false);
        expect(['already_acknowledged', 'lease_expired']).toContain(reply.code);
        expect(gate.getSnapshot().value).toBe(before.value);
        break;
      }
      case 'ackUnknown':
        gate.send({
          type: 'gate.ack',
          requestId: ++this.requests,
          deliveryId: 'dlv_unknown',
          now: this.clock.now(),
        });
        expect(gate.getSnapshot().context.lastReply).toMatchObject({
          accepted: false,
          code: 'unknown_delivery',
        });
        break;
      case 'leaseExpires':
        this.clock.increment(LEASE_MS);
        break;
      case 'cooldownEnds':
        this.clock.increment(COOLDOWN_MS);
        break;
      case 'focus':
        gate.send({ type: 'gate.focus', until: event.on ? FOCUS_UNTIL : null, now: this.clock.now() });
        break;
      case 'replan':
        gate.send({ type: 'replan.status', pending: event.pending });
        break;
    }
    await this.settle();
  }

  stop() {
    this.root.stop();
    this.replyTo.stop();
  }
}

/** Every event is in exactly the place the model says, and nowhere else. */
const check = (run: GateRun, expected: ModelContext, where: string) => {
  const gate = run.gate().getSnapshot();
  expect(run.problems, where).toEqual([]);
  expect(gate.value, `${where}: the gate state`).toBe(expected.phase);
  expect(slotsOf(run.inbox().getSnapshot().context.events), `${where}: the inbox, front first`).toEqual(
    expected.queue,
  );
  expect(slotsOf(gate.context.delivery?.events ?? []), `${where}: the delivery out`).toEqual(expected.out);
  expect(run.consumed, `${where}: consumed`).toEqual(expected.consumed);
  expect(
    run.dead.map((e) => e.item_id),
    `${where}: dead letters`,
  ).toEqual(expected.dead);
  expect(gate.context.deferred, `${where}: a reflection is held`).toBe(expected.deferred);
  const places = [
    ...expected.queue.map((s) => s.id),
    ...expected.out.map((s) => s.id),
    ...expected.consumed,
    ...expected.dead,
  ];
  expect(places.length, `${where}: every event is in exactly one place`).toBe(new Set(places).size);
  expect(places.length, `${where}: no event is lost`).toBe(expected.inserted);
};

// ---------------------------------------------------------------------------------------------

let stepsRun = 0;

afterAll(() => {
  console.log(`gate model: ${paths.length} paths, ${stepsRun} steps; gateMachine ${coverage.summary()}`);
  const missing = coverage.missingTransitions();
  if (missing.length > 0)
    console.log(`not taken by the model (covered in test/machines/gate.test.ts):\n  ${missing.join('\n  ')}`);
});

describe('gate put-back and consumption rules, model-based, against the real gate and inbox', () => {
  it('generates every gate state × every outcome', () => {
    const seen = new Set(paths.flatMap((p) => replay(p).flatMap(({ after }) => after.context.outcomes)));
    for (const outcome of ['told', 'not_worth_saying', 'later', 'lease_expired'] as const) {
      for (const gates of ['awaiting', 'awaiting+focus', 'awaiting+answering', 'awaiting+focus+answering']) {
        expect(seen, `${outcome} while ${gates}`).toContain(`${outcome} @ ${gates}`);
      }
    }
    for (const gates of ['idle', 'awaiting', 'cooldown', 'idle+answering']) {
      for (const mode of ['fail', 'empty']) {
        expect(seen, `thinker failed (${mode}) from ${gates}`).toContain(
          `thinker_failed (${mode}) @ ${gates}`,
        );
      }
    }
    for (const gates of [
      'awaiting',
      'idle+focus',
      'idle+answering',
      'cooldown',
      'cooldown+focus',
      'awaiting+focus+answering',
    ]) {
      expect(seen, `gated while ${gates}`).toContain(`gated @ ${gates}`);
    }
    const dead = paths.some((p) => replay(p).some(({ after }) => after.context.dead.length > 0));
    expect(dead, 'some path dead-letters an event').toBe(true);
  });

  describe.each(
    paths.map(
      (p) =>
        [
          stepsOf(p)
            .map((s) => describeEvent(s.event))
            .join(' → '),
          p,
        ] as const,
    ),
  )('%s', (_, path) => {
    it('puts every event where the model says, delivering none after it was consumed', async () => {
      const run = new GateRun();
      try {
        await run.start();
        for (const [index, { event, after }] of replay(path).entries()) {
          const where = `step ${index + 1} (${describeEvent(event)})`;
          await run.execute(event);
          check(run, after.context, where);
          stepsRun++;
        }
      } finally {
        run.stop();
      }
    });
  });

  it('has visited every state of gateMachine', () => {
    expect(coverage.missingStates()).toEqual([]);
  });
});
