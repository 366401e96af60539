import { afterEach, describe, expect, it } from 'vitest';
import { type ActorRefFrom, createActor, fromCallback, SimulatedClock, waitFor } from 'xstate';
import {
  createPipeline,
  type GateActions,
  inboxAtRest,
  listedItem,
  type Pipeline,
} from '../../harness/pipeline.js';
import {
  type AckOutcome,
  ackRejection,
  type Caller,
  type Delivery,
  type Judgement,
  judge,
  RECENT_KEPT,
  retryOrDeadLetter,
  splitOutcomes,
} from '../../machines/delivery-rules.js';
import type { InboxEvent } from '../../machines/external.js';
import type { gateMachine } from '../../machines/gate.js';
import type { ClaimAnswer, GateAckAnswer } from '../../machines/gate-context.js';
import {
  BACKLOG_EVENTS,
  type GateInput,
  INSERT_QUIET_MS,
  RETRY_CAP_MAX_MS,
  retryDelayMs,
} from '../../machines/gate-settings.js';
import type { inboxMachine } from '../../machines/inbox.js';
import type { DeadLetter, LoadedInbox, SettlementWrite } from '../../machines/inbox-context.js';
import { CATCH_UP_MS } from '../../machines/poller-decisions.js';
import type { Reply } from '../../machines/reply.js';
import { inboxEvent } from '../support/inbox-event.js';

/*
 * The gate on a simulated clock, beside the real inbox machine (restored from a list, fed through
 * offers, drained by the real `drainFromInbox`), and a fake thinker the test scripts per
 * reflection. What the gate decides reaches the inbox as `inbox.settle`: it is observed where the
 * inbox hands it to its `persistSettlement` effect, and in the inbox's own context.
 */

type Think = (events: InboxEvent[], now: number) => Promise<Judgement[]>;

const event = inboxEvent;

const speakAll =
  (urgency = 0.9): Think =>
  async (events) =>
    events.map((e) => ({ id: e.id, urgency }));

interface Harness {
  clock: SimulatedClock;
  gate: ActorRefFrom<typeof gateMachine>;
  inboxActor: ActorRefFrom<typeof inboxMachine>;
  think: Think;
  thinkCalls: Array<{ events: InboxEvent[]; now: number }>;
  persisted: SettlementWrite[];
  /** Each delivery as it went out to an agent (the gate entered `awaiting`), read from the gate's snapshots. */
  claimed: Delivery[];
  drains: number;
  settle(): Promise<void>;
  reflect(reason?: 'inserted' | 'timer' | 'checkin'): Promise<void>;
  advance(ms: number): Promise<void>;
  /** Offers events to the inbox, as a poller would, and waits until they are in. */
  add(...events: InboxEvent[]): Promise<void>;
  claim(agent?: string, session?: string): Promise<ClaimAnswer>;
  ack(deliveryId: string, outcomes?: Record<string, AckOutcome>, caller?: Caller): Promise<GateAckAnswer>;
  state(): string;
  inbox(): InboxEvent[];
  ids(): string[];
  /** Ids consumed over every settlement, in order. */
  consumed(): string[];
  /** Dead letters over every settlement, in order. */
  deadLetters(): DeadLetter[];
}

const running: Pipeline[] = [];
afterEach(() => {
  for (const pipeline of running.splice(0)) pipeline.stop();
});

/** Starts the gate and the inbox, and waits until the inbox has restored `restored`; a restore given as a function is not waited for. */
const start = async (
  input: GateInput = {},
  restored: InboxEvent[] | (() => Promise<LoadedInbox>) = [],
  gateActions: GateActions = {},
): Promise<Harness> => {
  const clock = new SimulatedClock();
  /** The events `add` offers, by item id: the fake acceptor inserts them as they are. */
  const offering = new Map<string, InboxEvent>();
  const h = {
    clock,
    think: speakAll(),
    thinkCalls: [],
    persisted: [],
    claimed: [],
    drains: 0,
  } as unknown as Harness;
  const pipeline = createPipeline({
    clock,
    inbox: {
      load: typeof restored === 'function' ? restored : async () => ({ events: restored, deadLetters: [] }),
      accept: async (offer) => ({
        inserted: offer.items.slice(0, offer.limit).map((item) => offering.get(item.itemId)!),
        capped: offer.items.length > offer.limit,
      }),
      // Written at once: the inbox hears back a tick later, as from a file write.
      persist: async (write) => {
        h.persisted.push(write);
      },
      // Reflections are the test's to ask for: an insert must not wake the gate.
      wakesGate: false,
    },
    gate: {
      input,
      beforeDrain: () => {
        h.drains++;
      },
      think: async (thinking) => {
        h.thinkCalls.push(thinking);
        return { judgements: await h.think(thinking.events, thinking.now), by: 'test', note: null };
      },
      actions: gateActions,
    },
  });
  running.push(pipeline);
  pipeline.start();
  h.gate = pipeline.gate();
  h.inboxActor = pipeline.inbox();
  let awaiting = false;
  h.gate.subscribe((s) => {
    if (s.matches('awaiting') && !awaiting) h.claimed.push(s.context.delivery!);
    awaiting = s.matches('awaiting');
  });
  h.settle = async () => {
    await waitFor(h.gate, (s) => !s.matches('reflecting') && !s.matches('thinking'), { timeout: 1000 });
    await waitFor(h.inboxActor, inboxAtRest, { timeout: 1000 });
  };
  h.reflect = async (reason = 'checkin') => {
    h.gate.send({ type: 'gate.reflect', reason });
    await h.settle();
  };
  h.advance = async (ms) => {
    clock.increment(ms);
    await h.settle();
  };
  h.add = async (...events) => {
    for (const e of events) offering.set(e.id, e);
    pipeline.offer(
      'cal',
      'cal-server',
      events.map((e) => listedItem(e.id, e.title)),
    );
    await waitFor(h.inboxActor, inboxAtRest, { timeout: 1000 });
  };
  h.claim = (agent = 'agent-a', session) => pipeline.claim({ agent, ...(session ? { session } : {}) });
  h.ack = (deliveryId, outcomes, caller = { agent: 'agent-a' }) => pipeline.ack(deliveryId, caller, outcomes);
  h.state = () => h.gate.getSnapshot().value as string;
  h.inbox = () => h.inboxActor.getSnapshot().context.events;
  h.ids = () => h.inbox().map((e) => e.id);
  h.consumed = () => h.persisted.flatMap((p) => p.settlement.consumed);
  h.deadLetters = () => h.persisted.flatMap((p) => p.deadLetters);
  // The inbox must be restored before the first drain.
  if (typeof restored !== 'function')
    await waitFor(h.inboxActor, (s) => s.matches('ready'), { timeout: 1000 });
  return h;
};

const delivery = (h: Harness) => h.gate.getSnapshot().context.delivery!;

/** A macrotask: every promise already settled has run its callbacks by then. */
const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('gateMachine', () => {
  it('sets urgent events aside until an agent claims them, then delivers them under a lease from the claim', async () => {
    const h = await start({}, [event(1), event(2)]);
    h.clock.set(5_000);
    await h.reflect();
    expect(h.state()).toBe('offered');
    const offered = delivery(h);
    expect(offered.events.map((e) => [e.id, e.urgency])).toEqual([
      ['ext_1', 0.9],
      ['ext_2', 0.9],
    ]);
    expect(offered).toMatchObject({ holder: null, leaseExpiresAt: null });
    expect(h.claimed, 'nothing is out before an agent claims it').toEqual([]);
    expect(h.gate.getSnapshot().context.delivered).toBe(0);
    expect(h.thinkCalls[0]!.now).toBe(5_000);
    expect(h.inbox()).toEqual([]);

    h.clock.set(8_000);
    const claim = await h.claim('agent-a');
    expect(h.state()).toBe('awaiting');
    const d = delivery(h);
    expect(d).toEqual({ ...offered, holder: 'agent-a', leaseExpiresAt: 8_000 + 120_000 });
    expect(claim).toMatchObject({ delivery: d, heldByOther: false });
    expect(h.claimed).toEqual([d]);
    expect(h.gate.getSnapshot().context.delivered).toBe(2);

    const reply = await h.ack(d.deliveryId);
    const { context } = h.gate.getSnapshot();
    expect(reply).toMatchObject({ accepted: true, consumed: ['ext_1', 'ext_2'], putBack: [] });
    expect(h.consumed()).toEqual(['ext_1', 'ext_2']);
    expect(context.delivery).toBeNull();
    // cooldownMs defaults to 0: the gate is idle again at once.
    await h.advance(0);
    expect(h.state()).toBe('idle');
  });

  it('keeps a delivery offered, with no lease and no attempt counted, however long no agent comes', async () => {
    const h = await start({ leaseMs: 60_000, reflectEveryMs: 60_000 }, [event(1), event(2)]);
    await h.reflect();
    expect(h.state()).toBe('offered');
    const settled = h.persisted.length;
    for (let hour = 1; hour <= 24; hour++) {
      await h.advance(3_600_000);
      expect(h.state(), `after ${hour} h`).toBe('offered');
    }
    expect(delivery(h)).toMatchObject({ holder: null, leaseExpiresAt: null });
    expect(
      delivery(h).events.map((e) => e.attempts),
      'no attempt counted',
    ).toEqual([0, 0]);
    expect(h.persisted.length, 'nothing settled while it waits').toBe(settled);
    expect(h.gate.getSnapshot().context).toMatchObject({ putBack: 0, deadLettered: 0, delivered: 0 });
    expect(h.drains, 'no timer reflection while it waits').toBe(1);
    expect(h.inbox()).toEqual([]);

    // The lease runs from the claim, a day later: 60 s from then, not from the reflection.
    const claimedAt = h.clock.now();
    await h.claim();
    expect(delivery(h).leaseExpiresAt).toBe(claimedAt + 60_000);
    await h.advance(59_999);
    expect(h.state()).toBe('awaiting');
    await h.advance(1);
    expect(h.state()).toBe('idle');
    expect(h.inbox()).toEqual([event(1, 1), event(2, 1)]);
    expect(h.persisted.at(-1)!.settlement).toMatchObject({ at: claimedAt + 60_000, consumed: [] });
  });

  it('gives the delivery out to its holder only: another agent gets nothing, the holder gets it again', async () => {
    const h = await start({ leaseMs: 60_000 }, [event(1)]);
    expect(await h.claim(), 'nothing is set aside yet').toEqual({
      delivery: null,
      heldByOther: false,
    });
    await h.reflect();
    h.clock.set(1_000);
    const mine = await h.claim('agent-a');
    expect(mine.delivery).not.toBeNull();
    h.clock.set(30_000);
    expect(await h.claim('agent-b')).toMatchObject({ delivery: null, heldByOther: true });
    const again = await h.claim('agent-a');
    expect(again, 'the holder gets the same delivery again').toMatchObject({
      delivery: mine.delivery,
      heldByOther: false,
    });
    expect(again.delivery!.leaseExpiresAt, 'a repeated claim does not extend the lease').toBe(61_000);
    expect(h.state()).toBe('awaiting');
    expect(h.claimed, 'out once, at the first claim').toHaveLength(1);
    expect(h.gate.getSnapshot().context.delivered).toBe(1);

    await h.advance(31_000);
    expect(h.state(), 'the lease ran from the first claim').toBe('idle');
    expect(await h.claim('agent-b')).toMatchObject({ delivery: null, heldByOther: false });
  });

  it.each([
    ['the user goes into focus', (h: Harness) => h.gate.send({ type: 'gate.focus', until: 60_000, now: 0 })],
    ['a replan becomes pending', (h: Harness) => h.gate.send({ type: 'replan.status', pending: true })],
  ])(
    'puts an offered delivery back untried when %s, and judges it again once the gate opens',
    async (_, gateOn) => {
      const h = await start({}, [event(1), event(2)]);
      await h.reflect();
      expect(h.state()).toBe('offered');
      const withdrawn = delivery(h).deliveryId;
      gateOn(h);
      await h.settle();
      expect(h.state()).toBe('idle');
      expect(h.gate.getSnapshot().context.delivery).toBeNull();
      expect(await h.claim(), 'nothing to claim while the gate is closed').toMatchObject({ delivery: null });
      expect(h.persisted.at(-1)!.settlement, 'back at the front, no attempt counted').toMatchObject({
        consumed: [],
        putBack: [
          { id: 'ext_1', attempts: 0 },
          { id: 'ext_2', attempts: 0 },
        ],
        deadLettered: [],
      });
      expect(h.inbox().map((e) => [e.id, e.attempts])).toEqual([
        ['ext_1', 0],
        ['ext_2', 0],
      ]);
      expect(h.claimed).toEqual([]);

      h.gate.send({ type: 'gate.focus', until: null, now: 0 });
      h.gate.send({ type: 'replan.status', pending: false });
      await h.settle();
      expect(h.state(), 'judged again as soon as the gate opens').toBe('offered');
      expect(delivery(h).deliveryId).not.toBe(withdrawn);
      expect((await h.claim()).delivery).toMatchObject({
        holder: 'agent-a',
        events: [{ id: 'ext_1' }, { id: 'ext_2' }],
      });
    },
  );

  it('answers an ack of a delivery no agent has claimed as unknown, and keeps it offered', async () => {
    const h = await start({}, [event(1)]);
    await h.reflect();
    const { deliveryId } = delivery(h);
    const settled = h.persisted.length;
    const reply = await h.ack(deliveryId);
    expect(reply).toMatchObject({ accepted: false, code: 'unknown_delivery', consumed: [] });
    expect(reply.reason).toContain('No delivery is out now');
    expect(h.state()).toBe('offered');
    expect(h.persisted.length, 'nothing settled').toBe(settled);
    expect(h.consumed()).toEqual([]);
    await h.claim();
    expect(await h.ack(deliveryId)).toMatchObject({ accepted: true, consumed: ['ext_1'] });
  });

  it('consumes events below the threshold silently and puts back the ones the thinker left out', async () => {
    const h = await start({}, [event(1), event(2), event(3)]);
    h.think = async () => [
      { id: 'ext_1', urgency: 0.2 },
      { id: 'ext_2', urgency: 0.5 },
      { id: 'nope', urgency: 1 },
    ];
    await h.reflect();
    expect(h.consumed()).toEqual(['ext_1']);
    expect(delivery(h).events.map((e) => e.id)).toEqual(['ext_2']);
    expect(h.inbox()).toEqual([event(3, 1)]);
    expect(h.persisted.map((p) => p.settlement)).toEqual([
      { seq: 1, at: 0, consumed: ['ext_1'], putBack: [event(3, 1)], deadLettered: [] },
    ]);
    expect(h.gate.getSnapshot().context).toMatchObject({ consumedSilently: 1, putBack: 1, settles: 1 });
  });

  it('goes back to idle without a delivery when nothing is urgent', async () => {
    const h = await start({}, [event(1)]);
    h.think = speakAll(0.1);
    await h.reflect();
    expect(h.state()).toBe('idle');
    expect(h.consumed()).toEqual(['ext_1']);
    expect(h.claimed).toEqual([]);
  });

  it('does not think about an empty inbox', async () => {
    const h = await start();
    await h.reflect();
    expect(h.drains).toBe(1);
    expect(h.thinkCalls).toEqual([]);
    expect(h.persisted).toEqual([]);
    expect(h.state()).toBe('idle');
  });

  it('drains nothing while the inbox is still loading, and says so', async () => {
    let restore: (loaded: LoadedInbox) => void = () => {};
    const h = await start({}, () => new Promise((resolve) => (restore = resolve)));
    h.gate.send({ type: 'gate.reflect', reason: 'checkin' });
    await waitFor(h.gate, (s) => s.matches('idle'), { timeout: 1000 });
    expect(h.drains).toBe(1);
    expect(h.thinkCalls).toEqual([]);
    expect(h.gate.getSnapshot().context.lastError).toMatch(/Could not drain the inbox: .*still loading/);
    restore({ events: [event(1)], deadLetters: [] });
    await waitFor(h.inboxActor, (s) => s.matches('ready'), { timeout: 1000 });
    expect(h.ids(), 'nothing was taken').toEqual(['ext_1']);
  });

  it.each([
    [
      'throws',
      (async () => {
        throw new Error('model overloaded');
      }) as Think,
      /The thinker failed: model overloaded/,
    ],
    ['answers nothing', (async () => []) as Think, /nothing usable/],
    ['answers garbage', (async () => [{ id: 'ext_1', urgency: Number.NaN }]) as Think, /nothing usable/],
  ])(
    'puts every event back at the front, in order, with one more attempt, when the thinker %s',
    async (_, think, error) => {
      const h = await start({}, [event(1), event(2)]);
      // An event that arrives during the thought stays behind the ones put back.
      h.think = async (events, now) => {
        await h.add(event(3));
        return think(events, now);
      };
      await h.reflect();
      expect(h.ids()).toEqual(['ext_1', 'ext_2', 'ext_3']);
      expect(h.inbox().map((e) => e.attempts)).toEqual([1, 1, 0]);
      expect(h.consumed()).toEqual([]);
      expect(h.persisted.map((p) => p.settlement)).toEqual([
        { seq: 1, at: 0, consumed: [], putBack: [event(1, 1), event(2, 1)], deadLettered: [] },
      ]);
      const { context, value } = h.gate.getSnapshot();
      expect(value).toBe('backingOff');
      expect(context.thinkFailures).toBe(1);
      expect(context.lastError).toMatch(error);
    },
  );

  it('treats a thinker that does not answer in time as a failed thought and ignores its late answer', async () => {
    const h = await start({ thinkTimeoutMs: 10_000 }, [event(1)]);
    let answer: (j: Judgement[]) => void = () => {};
    h.think = () => new Promise((resolve) => (answer = resolve));
    h.gate.send({ type: 'gate.reflect', reason: 'checkin' });
    await waitFor(h.gate, (s) => s.matches('thinking'));
    h.clock.increment(9_999);
    expect(h.state()).toBe('thinking');
    await h.advance(1);
    expect(h.inbox()).toEqual([event(1, 1)]);
    answer([{ id: 'ext_1', urgency: 1 }]);
    await nextTick();
    expect(h.state()).toBe('backingOff');
    expect(h.gate.getSnapshot().context.delivery).toBeNull();
    expect(h.inbox()).toEqual([event(1, 1)]);
    expect(h.persisted).toHaveLength(1);
  });

  it('moves an event to the dead letters when it reaches maxAttempts, never back to the inbox', async () => {
    const h = await start({ maxAttempts: 3 }, [event(1, 1), event(2, 2)]);
    h.think = async () => {
      throw new Error('down');
    };
    h.clock.set(7_000);
    await h.reflect();
    expect(h.inbox()).toEqual([event(1, 2)]);
    const dead = { at: new Date(7_000).toISOString(), reason: 'max_attempts', event: event(2, 3) };
    expect(h.persisted.map((p) => p.settlement)).toEqual([
      { seq: 1, at: 7_000, consumed: [], putBack: [event(1, 2)], deadLettered: [event(2, 3)] },
    ]);
    expect(h.deadLetters()).toEqual([dead]);
    expect(h.inboxActor.getSnapshot().context).toMatchObject({ deadLettered: 1, deadLetters: [dead] });
    expect(h.gate.getSnapshot().context).toMatchObject({ deadLettered: 1, putBack: 1 });
  });

  it('puts a delivery back when its lease expires, and answers a late ack as expired', async () => {
    const h = await start({ leaseMs: 60_000 }, [event(1), event(2)]);
    await h.reflect();
    await h.claim();
    const { deliveryId } = delivery(h);
    await h.advance(59_999);
    expect(h.state()).toBe('awaiting');
    await h.advance(1);
    expect(h.state()).toBe('idle');
    expect(h.inbox()).toEqual([event(1, 1), event(2, 1)]);
    expect(h.gate.getSnapshot().context.lastError).toMatch(/lease of delivery .* expired/);
    const reply = await h.ack(deliveryId);
    expect(reply).toMatchObject({ accepted: false, code: 'lease_expired' });
    expect(reply.reason).toContain('No delivery is out now');
    expect(h.consumed()).toEqual([]);
  });

  it('puts back the events the agent could not deal with now, and consumes the others', async () => {
    const h = await start({}, [event(1), event(2), event(3)]);
    await h.reflect();
    await h.claim();
    const reply = await h.ack(delivery(h).deliveryId, {
      ext_1: 'told',
      ext_2: 'later',
      ext_3: 'not_worth_saying',
    });
    expect(h.consumed()).toEqual(['ext_1', 'ext_3']);
    expect(h.inbox()).toEqual([event(2, 1)]);
    expect(reply).toMatchObject({
      accepted: true,
      consumed: ['ext_1', 'ext_3'],
      putBack: ['ext_2'],
      deadLettered: [],
    });
  });

  it('dead-letters an event the agent puts off once too often', async () => {
    const h = await start({ maxAttempts: 2 }, [event(1, 1), event(2)]);
    await h.reflect();
    await h.claim();
    const reply = await h.ack(delivery(h).deliveryId, { ext_1: 'later', ext_2: 'later' });
    expect(reply).toMatchObject({
      accepted: true,
      consumed: [],
      putBack: ['ext_2'],
      deadLettered: ['ext_1'],
    });
    expect(h.inbox()).toEqual([event(2, 1)]);
    expect(h.deadLetters().map((d) => [d.reason, d.event])).toEqual([['max_attempts', event(1, 2)]]);
  });

  it('answers unknown, duplicate and wrong-event acks with a code and leaves the delivery alone', async () => {
    const h = await start({}, [event(1)]);
    await h.reflect();
    await h.claim();
    const { deliveryId } = delivery(h);
    const unknown = await h.ack('dlv_nope');
    expect(unknown).toMatchObject({ accepted: false, code: 'unknown_delivery' });
    expect(unknown.reason).toContain(`The delivery out now is ${deliveryId}`);
    expect(await h.ack(deliveryId, { ext_9: 'told' })).toMatchObject({
      accepted: false,
      code: 'unknown_event',
    });
    expect(h.state()).toBe('awaiting');
    expect(await h.ack(deliveryId)).toMatchObject({ accepted: true });
    expect(await h.ack(deliveryId)).toMatchObject({ accepted: false, code: 'already_acknowledged' });
    expect(h.consumed()).toEqual(['ext_1']);
  });

  it("refuses an ack from an agent that does not hold the delivery, and leaves the holder's lease alone", async () => {
    const h = await start({}, [event(1)]);
    await h.reflect();
    await h.claim('agent:claude', 'sess-1');
    const { deliveryId } = delivery(h);
    for (const other of [
      { agent: 'agent:codex' },
      { agent: 'session:sess-2', session: 'sess-2' },
      { agent: 'one-shot' },
    ]) {
      const refused = await h.ack(deliveryId, undefined, other);
      expect(refused, other.agent).toMatchObject({ accepted: false, code: 'not_holder' });
      expect(refused.reason).toContain(`Delivery ${deliveryId} is out to agent:claude, not to you`);
    }
    expect(h.state()).toBe('awaiting');
    expect(h.consumed()).toEqual([]);
    // The session that claimed it under a name may ack without the name.
    expect(await h.ack(deliveryId, undefined, { agent: 'session:sess-1', session: 'sess-1' })).toMatchObject({
      accepted: true,
    });
    expect(h.consumed()).toEqual(['ext_1']);
  });

  it('lets one-shot callers, who share one identity, acknowledge what one of them claimed', async () => {
    const h = await start({}, [event(1)]);
    await h.reflect();
    await h.claim('one-shot');
    expect(
      await h.ack(delivery(h).deliveryId, undefined, { agent: 'one-shot', session: null }),
    ).toMatchObject({
      accepted: true,
    });
  });

  it('answers an ack with the seq of the settlement the inbox receives for it', async () => {
    const h = await start({}, [event(1), event(2), event(3)]);
    h.think = async () => [
      { id: 'ext_1', urgency: 0.9 },
      { id: 'ext_2', urgency: 0.1 },
    ];
    await h.reflect();
    // The reflection settled once: ext_2 consumed quietly, ext_3 put back.
    expect(h.persisted.map((p) => p.settlement.seq)).toEqual([1]);
    await h.claim();
    const reply = await h.ack(delivery(h).deliveryId);
    expect(reply).toMatchObject({ accepted: true, consumed: ['ext_1'] });
    // The ack is answered once the inbox has written its own settlement, so a restart cannot deliver them again.
    expect(h.persisted.at(-1)!.settlement).toEqual({
      seq: 2,
      at: 0,
      consumed: ['ext_1'],
      putBack: [],
      deadLettered: [],
    });
    expect(h.gate.getSnapshot().context.settles).toBe(2);
    expect(h.inboxActor.getSnapshot().context.settleSaved).toBe(2);
    expect(
      h.persisted.map((p) => p.settlement.seq),
      'one settlement per decision, numbered in order',
    ).toEqual([1, 2]);
  });

  it('records the fate of recent events: below threshold, delivered, told, not worth saying', async () => {
    const h = await start({}, [event(1), event(2), event(3), event(4)]);
    h.think = async () => [
      { id: 'ext_1', urgency: 0.1 },
      { id: 'ext_2', urgency: 0.9 },
      { id: 'ext_3', urgency: 0.9 },
      { id: 'ext_4', urgency: 0.9 },
    ];
    h.clock.set(1_000);
    await h.reflect();
    h.clock.set(2_000);
    await h.claim();
    h.clock.set(3_000);
    await h.ack(delivery(h).deliveryId, { ext_3: 'not_worth_saying', ext_4: 'later' });
    const recent = h.gate.getSnapshot().context.recent.map((r) => [r.event.id, r.fate, r.at]);
    expect(recent).toEqual([
      ['ext_1', 'below_threshold', 1_000],
      ['ext_2', 'delivered', 2_000],
      ['ext_3', 'delivered', 2_000],
      ['ext_4', 'delivered', 2_000],
      ['ext_2', 'told', 3_000],
      ['ext_3', 'not_worth_saying', 3_000],
    ]);
    expect(
      h.gate.getSnapshot().context.recent.every((r) => !('urgency' in r.event)),
      'recorded as inbox events',
    ).toBe(true);
  });

  it("keeps the thinker's reasons: with the delivery, each recent fate and the last thought, never in the inbox", async () => {
    const h = await start({}, [event(1), event(2), event(3)]);
    h.think = async () => [
      { id: 'ext_1', urgency: 0.1, why: 'newsletter' },
      { id: 'ext_2', urgency: 0.9, why: 'starts in 5 minutes' },
    ];
    h.clock.set(1_000);
    await h.reflect();
    expect(delivery(h).events.map((e) => [e.id, e.urgency, e.why])).toEqual([
      ['ext_2', 0.9, 'starts in 5 minutes'],
    ]);
    expect(h.gate.getSnapshot().context.lastThought).toEqual({
      at: 1_000,
      by: 'test',
      note: null,
      judged: [
        {
          id: 'ext_2',
          source: 'cal',
          title: 'Item 2',
          urgency: 0.9,
          why: 'starts in 5 minutes',
          verdict: 'speak',
        },
        { id: 'ext_1', source: 'cal', title: 'Item 1', urgency: 0.1, why: 'newsletter', verdict: 'quiet' },
      ],
      unjudged: 1,
    });
    await h.claim();
    await h.ack(delivery(h).deliveryId);
    const recent = h.gate.getSnapshot().context.recent.map((r) => [r.event.id, r.fate, r.why]);
    expect(recent).toEqual([
      ['ext_1', 'below_threshold', 'newsletter'],
      ['ext_2', 'delivered', 'starts in 5 minutes'],
      ['ext_2', 'told', 'starts in 5 minutes'],
    ]);
    expect(
      h.gate.getSnapshot().context.recent.every((r) => !('why' in r.event) && !('urgency' in r.event)),
    ).toBe(true);
    // The unjudged event went back as it was, with one more attempt and no reason.
    expect(h.inbox()).toEqual([event(3, 1)]);
  });

  it(`keeps only the last ${RECENT_KEPT} fates`, async () => {
    const many = Array.from({ length: RECENT_KEPT + 5 }, (_, i) => event(i + 1));
    const h = await start({}, many);
    h.think = speakAll(0.1);
    await h.reflect();
    const recent = h.gate.getSnapshot().context.recent;
    expect(recent.map((r) => r.event.id)).toEqual(many.slice(5).map((e) => e.id));
  });

  it('takes new settings with gate.configure: the lease and threshold of the next delivery', async () => {
    const h = await start({ leaseMs: 120_000 }, [event(1)]);
    await h.reflect();
    await h.claim();
    expect(delivery(h).leaseExpiresAt).toBe(120_000);
    h.gate.send({ type: 'gate.configure', settings: { leaseMs: 30_000, threshold: 0.8 } });
    expect(h.gate.getSnapshot().context).toMatchObject({ leaseMs: 30_000, threshold: 0.8, maxAttempts: 5 });
    await h.advance(30_000);
    expect(h.state(), 'the delivery out keeps the lease it was given').toBe('awaiting');
    await h.ack(delivery(h).deliveryId);
    await h.advance(0);

    await h.add(event(2), event(3));
    h.think = async () => [
      { id: 'ext_2', urgency: 0.7 },
      { id: 'ext_3', urgency: 0.85 },
    ];
    await h.reflect();
    expect(
      delivery(h).events.map((e) => e.id),
      'the new threshold',
    ).toEqual(['ext_3']);
    expect(h.consumed()).toContain('ext_2');
    const claimedAt = h.clock.now();
    await h.claim();
    expect(delivery(h).leaseExpiresAt, 'the new lease').toBe(claimedAt + 30_000);
    await h.advance(30_000);
    expect(h.state()).toBe('idle');
    expect(h.ids()).toEqual(['ext_3']);

    // Unknown keys and non-numbers are ignored; what is not given keeps its value.
    h.gate.send({ type: 'gate.configure', settings: { leaseMs: 'soon', bogus: 1 } as unknown as GateInput });
    expect(h.gate.getSnapshot().context).toMatchObject({ leaseMs: 30_000, threshold: 0.8 });
    expect(h.gate.getSnapshot().context).not.toHaveProperty('bogus');
  });

  it('leaves the inbox untouched while a delivery is offered or out, and reflects once it is acknowledged', async () => {
    const h = await start({}, [event(1)]);
    await h.reflect();
    await h.add(event(2));
    await h.reflect('checkin');
    expect(h.state()).toBe('offered');
    await h.claim();
    await h.reflect('checkin');
    expect(h.drains).toBe(1);
    expect(h.ids()).toEqual(['ext_2']);
    expect(h.gate.getSnapshot().context).toMatchObject({ lastGate: 'awaiting', deferred: true });
    expect(h.gate.getSnapshot().context.gated.awaiting).toBe(2);
    await h.ack(delivery(h).deliveryId);
    await h.advance(0);
    expect(h.drains).toBe(2);
    expect(h.state()).toBe('offered');
    expect(delivery(h).events.map((e) => e.id)).toEqual(['ext_2']);
  });

  it('holds reflections during the cooldown and runs the held one when it ends', async () => {
    const h = await start({ cooldownMs: 30_000 }, [event(1)]);
    await h.reflect();
    await h.claim();
    await h.ack(delivery(h).deliveryId);
    expect(h.state()).toBe('cooldown');
    await h.add(event(2));
    await h.reflect();
    expect(h.drains).toBe(1);
    expect(h.gate.getSnapshot().context.gated.cooldown).toBe(1);
    await h.advance(29_999);
    expect(h.drains).toBe(1);
    await h.advance(1);
    expect(h.drains).toBe(2);
    expect(h.state()).toBe('offered');
  });

  it('holds reflections while the user is in focus, until the focus time passes', async () => {
    const h = await start({}, [event(1)]);
    h.gate.send({ type: 'gate.focus', until: 45 * 60_000, now: 0 });
    await h.reflect();
    expect(h.drains).toBe(0);
    expect(h.ids()).toEqual(['ext_1']);
    expect(h.gate.getSnapshot().context).toMatchObject({ lastGate: 'focus', focusUntil: 45 * 60_000 });
    await h.advance(45 * 60_000 - 1);
    expect(h.drains).toBe(0);
    await h.advance(1);
    expect(h.drains).toBe(1);
    expect(h.gate.getSnapshot().context.focusUntil).toBeNull();
  });

  it('ends focus at once on `focus off`, and ignores a focus time already past', async () => {
    const h = await start({}, [event(1)]);
    h.gate.send({ type: 'gate.focus', until: 60_000, now: 0 });
    await h.reflect();
    h.gate.send({ type: 'gate.focus', until: null, now: 1_000 });
    await h.settle();
    expect(h.drains).toBe(1);
    h.gate.send({ type: 'gate.focus', until: 500, now: 1_000 });
    expect(h.gate.getSnapshot().context.focusUntil).toBeNull();
  });

  it('waits out a focus longer than a timer can hold', async () => {
    const h = await start({}, [event(1)]);
    const days = 40 * 24 * 3_600_000;
    h.gate.send({ type: 'gate.focus', until: days, now: 0 });
    await h.reflect();
    await h.advance(2 ** 31 - 1);
    expect(h.gate.getSnapshot().context.focusUntil).toBe(days);
    expect(h.drains).toBe(0);
    await h.advance(days - (2 ** 31 - 1));
    expect(h.drains).toBe(1);
  });

  it('holds reflections while a replan is pending, and reflects when it is answered', async () => {
    const h = await start({}, [event(1)]);
    h.gate.send({ type: 'replan.status', pending: true });
    await h.reflect();
    expect(h.drains).toBe(0);
    expect(h.gate.getSnapshot().context.lastGate).toBe('answering');
    h.gate.send({ type: 'replan.status', pending: false });
    await h.settle();
    expect(h.drains).toBe(1);
  });

  it('checks the gates in order: awaiting, focus, answering, cooldown', async () => {
    const h = await start({ cooldownMs: 10_000 }, [event(1)]);
    await h.reflect();
    await h.claim();
    h.gate.send({ type: 'gate.focus', until: 1_000_000, now: 0 });
    h.gate.send({ type: 'replan.status', pending: true });
    await h.reflect();
    expect(h.gate.getSnapshot().context.lastGate).toBe('awaiting');
    await h.ack(delivery(h).deliveryId);
    await h.reflect();
    expect(h.gate.getSnapshot().context.lastGate).toBe('focus');
    h.gate.send({ type: 'gate.focus', until: null, now: 0 });
    await h.reflect();
    expect(h.gate.getSnapshot().context.lastGate).toBe('answering');
    h.gate.send({ type: 'replan.status', pending: false });
    await h.reflect();
    expect(h.gate.getSnapshot().context.lastGate).toBe('cooldown');
  });

  it('reflects on its timer', async () => {
    const h = await start({ reflectEveryMs: 120_000 }, [event(1)]);
    await h.advance(119_999);
    expect(h.drains).toBe(0);
    await h.advance(1);
    expect(h.drains).toBe(1);
    expect(h.state()).toBe('offered');
  });

  it('runs a reflection asked for during another one right after it', async () => {
    const h = await start({}, [event(1)]);
    h.think = speakAll(0.1);
    h.gate.send({ type: 'gate.reflect', reason: 'checkin' });
    h.gate.send({ type: 'gate.reflect', reason: 'timer' });
    await h.settle();
    await waitFor(h.gate, () => h.drains === 2, { timeout: 1000 });
  });
});

describe('fewer thoughts: gathering inserts, backing off after failures', () => {
  const fail: Think = async () => {
    throw new Error('model down');
  };

  it('waits for a catch-up chain to go quiet and judges its inserts in one thought', async () => {
    const h = await start({}, [event(1)]);
    await h.reflect('inserted');
    expect(h.gate.getSnapshot().matches('gathering')).toBe(true);
    // A catch-up poll inserts again 2 s later: the quiet period starts over.
    await h.advance(CATCH_UP_MS);
    await h.add(event(2));
    await h.reflect('inserted');
    await h.advance(INSERT_QUIET_MS - 1);
    expect(h.thinkCalls).toEqual([]);
    await h.advance(1);
    expect(h.thinkCalls.map((c) => c.events.map((e) => e.id))).toEqual([['ext_1', 'ext_2']]);
    expect(h.state()).toBe('offered');
  });

  it('stops gathering for a check-in, and after the reflection interval however often items arrive', async () => {
    const checkin = await start({}, [event(1)]);
    await checkin.reflect('inserted');
    await checkin.reflect('checkin');
    expect(checkin.thinkCalls).toHaveLength(1);

    const h = await start({ reflectEveryMs: 10_000 }, [event(1)]);
    await h.reflect('inserted');
    for (let at = 0; at < 9_000; at += 1_000) {
      await h.advance(1_000);
      await h.reflect('inserted');
    }
    expect(h.thinkCalls).toEqual([]);
    await h.advance(1_000);
    expect(h.thinkCalls).toHaveLength(1);
  });

  it('holds a settled reflection while the user is in focus', async () => {
    const h = await start({}, [event(1)]);
    await h.reflect('inserted');
    h.gate.send({ type: 'gate.focus', until: 60_000, now: 0 });
    await h.advance(INSERT_QUIET_MS);
    expect(h.thinkCalls).toEqual([]);
    expect(h.gate.getSnapshot().context.deferred).toBe(true);
    await h.advance(60_000);
    expect(h.thinkCalls).toHaveLength(1);
  });

  it('asks a failed thinker again at the next reflection, not before, and not on a check-in', async () => {
    const h = await start({ reflectEveryMs: 60_000 }, [event(1)]);
    h.think = fail;
    await h.reflect();
    expect(h.state()).toBe('backingOff');
    expect(h.gate.getSnapshot().context.lastFailure).toEqual({
      at: 0,
      reason: 'model down',
      kind: 'endpoint',
      retryAfterMs: null,
      retryAt: 60_000,
    });
    await h.reflect('checkin');
    await h.advance(59_999);
    expect(h.thinkCalls).toHaveLength(1);
    h.think = speakAll();
    await h.advance(1);
    expect(h.thinkCalls).toHaveLength(2);
    expect(h.state()).toBe('offered');
    expect(h.gate.getSnapshot().context).toMatchObject({ failedInARow: 0, lastFailure: null });
  });

  it('doubles the wait from the reflection interval with each failure in a row, up to the cap, and starts over after a success', async () => {
    const h = await start({ reflectEveryMs: 60_000, retryCapMs: 200_000, maxAttempts: 20 }, [event(1)]);
    h.think = fail;
    await h.reflect();
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const calls = h.thinkCalls.length;
      const from = h.clock.now();
      while (h.thinkCalls.length === calls) await h.advance(1_000);
      waits.push(h.clock.now() - from);
    }
    expect(waits).toEqual([60_000, 120_000, 200_000, 200_000]);
    h.think = speakAll(0.1);
    await h.advance(200_000);
    expect(h.gate.getSnapshot().context.failedInARow).toBe(0);
    await h.add(event(2));
    h.think = fail;
    await h.reflect();
    const from = h.clock.now();
    const calls = h.thinkCalls.length;
    while (h.thinkCalls.length === calls) await h.advance(1_000);
    expect(h.clock.now() - from, 'a success starts the doubling over').toBe(60_000);
  });

  it("asks again at every reflection while the answers fail, and a failed answer starts the endpoint's doubling over", async () => {
    const h = await start({ reflectEveryMs: 60_000, retryCapMs: 300_000, maxAttempts: 20 }, [event(1)]);
    const garbled = () => Promise.reject(Object.assign(new Error('not JSON'), { kind: 'answer' }));
    const waitForNextCall = async () => {
      const calls = h.thinkCalls.length;
      const from = h.clock.now();
      while (h.thinkCalls.length === calls) await h.advance(1_000);
      return h.clock.now() - from;
    };
    h.think = garbled;
    await h.reflect();
    const answerWaits = [await waitForNextCall(), await waitForNextCall(), await waitForNextCall()];
    expect(answerWaits, 'no doubling while the endpoint answers').toEqual([60_000, 60_000, 60_000]);
    expect(h.gate.getSnapshot().context).toMatchObject({ failedInARow: 4, endpointFailuresInARow: 0 });
    h.think = fail;
    const endpointWaits = [await waitForNextCall(), await waitForNextCall()];
    expect(endpointWaits).toEqual([60_000, 60_000]);
    h.think = garbled;
    expect(await waitForNextCall(), 'the second endpoint failure in a row doubles the wait').toBe(120_000);
    expect(await waitForNextCall(), 'a failed answer starts the doubling over').toBe(60_000);
  });

  it('caps the wait at 5 minutes whatever the settings say, and never asks sooner than the next reflection', () => {
    expect(retryDelayMs({ reflectEveryMs: 120_000, retryCapMs: 3_600_000 }, 10)).toBe(RETRY_CAP_MAX_MS);
    expect(retryDelayMs({ reflectEveryMs: 120_000, retryCapMs: 30_000 }, 1)).toBe(120_000);
    expect(retryDelayMs({ reflectEveryMs: 3_000, retryCapMs: 300_000 }, 1)).toBe(3_000);
    expect(retryDelayMs({ reflectEveryMs: 3_000, retryCapMs: 300_000 }, 3)).toBe(12_000);
    expect(retryDelayMs({ reflectEveryMs: 3_000, retryCapMs: 300_000 }, 1_000)).toBe(300_000);
  });

  it("waits out the endpoint's Retry-After, within the cap, and new events do not cut it short", async () => {
    const h = await start({ reflectEveryMs: 10_000 }, [event(1)]);
    h.think = async () => {
      throw Object.assign(new Error('HTTP 429'), { reason: 'HTTP 429', retryAfterMs: 45_000 });
    };
    await h.reflect();
    expect(h.gate.getSnapshot().context.lastFailure).toMatchObject({ retryAfterMs: 45_000, retryAt: 45_000 });
    await h.add(event(2));
    await h.reflect('inserted');
    expect(h.state(), 'an insert does not end a Retry-After').toBe('backingOff');
    h.think = speakAll();
    await h.advance(44_999);
    expect(h.thinkCalls).toHaveLength(1);
    await h.advance(1);
    expect(h.thinkCalls.map((c) => c.events.map((e) => e.id))).toEqual([['ext_1'], ['ext_1', 'ext_2']]);

    const long = await start({ reflectEveryMs: 10_000 }, [event(1)]);
    long.think = async () => {
      throw Object.assign(new Error('HTTP 503'), { retryAfterMs: 3_600_000 });
    };
    await long.reflect();
    expect(long.gate.getSnapshot().context.lastFailure!.retryAt, 'an hour is capped at 5 minutes').toBe(
      RETRY_CAP_MAX_MS,
    );
  });

  it('judges new arrivals during the backoff at once, with the failed events in the same thought', async () => {
    const h = await start({ reflectEveryMs: 300_000 }, [event(1)]);
    h.think = fail;
    await h.reflect();
    h.think = speakAll();
    await h.add(event(2));
    await h.reflect('inserted');
    await h.advance(INSERT_QUIET_MS);
    expect(h.thinkCalls.map((c) => c.events.map((e) => e.id))).toEqual([['ext_1'], ['ext_1', 'ext_2']]);
    expect(h.clock.now()).toBeLessThan(300_000);
  });

  it('retries a failed backlog at the timer pace, without the backoff, so the inbox does not fill', async () => {
    const backlog = Array.from({ length: BACKLOG_EVENTS }, (_, i) => event(i + 1));
    const h = await start({ reflectEveryMs: 60_000 }, backlog);
    h.think = fail;
    await h.reflect();
    expect(h.state()).toBe('idle');
    await h.advance(60_000);
    expect(h.thinkCalls).toHaveLength(2);
    await h.advance(60_000);
    expect(h.thinkCalls, 'no doubling for a backlog').toHaveLength(3);

    const small = await start({ reflectEveryMs: 60_000 }, backlog.slice(1));
    small.think = fail;
    await small.reflect();
    expect(small.state()).toBe('backingOff');
  });
});

describe("the gate's decisions, as named actions a test can swap", () => {
  it('hands the lease expiry the delivery whose lease ran out, and leaves the whole decision to it', async () => {
    const expired: Delivery[] = [];
    const h = await start({ leaseMs: 60_000 }, [event(1), event(2)], {
      expireLease: (_, { delivery }) => {
        expired.push(delivery);
      },
    });
    await h.reflect();
    h.clock.set(1_000);
    await h.claim('agent-a');
    const out = delivery(h);
    const settled = h.persisted.length;
    await h.advance(59_999);
    expect(expired, 'not before the lease ends').toEqual([]);
    await h.advance(1);
    expect(h.state(), 'the transition is the config: back to idle').toBe('idle');
    expect(expired).toEqual([{ ...out, holder: 'agent-a', leaseExpiresAt: 61_000 }]);
    expect(h.persisted, 'the swapped step settled nothing with the inbox').toHaveLength(settled);
    expect(h.gate.getSnapshot().context).toMatchObject({ closed: [], putBack: 0, lastError: null });
  });

  it("hands the ack the delivery out and the agent's outcomes, and the reply is the real step's to give", async () => {
    const acks: Array<{ deliveryId: string; outcomes?: Record<string, AckOutcome>; now: number }> = [];
    const h = await start({}, [event(1), event(2)], {
      settleAck: (_, { delivery: d, ack }) => {
        acks.push({ deliveryId: d.deliveryId, outcomes: ack.outcomes, now: ack.now });
      },
    });
    await h.reflect();
    await h.claim('agent-a');
    const { deliveryId } = delivery(h);
    h.clock.set(4_000);
    const heard: Reply<unknown>[] = [];
    const replyTo = createActor(fromCallback<Reply<unknown>>(({ receive }) => receive((r) => heard.push(r))));
    replyTo.start();
    h.gate.send({
      type: 'gate.ack',
      requestId: 99,
      replyTo,
      deliveryId,
      outcomes: { ext_2: 'later' },
      agent: 'agent-a',
      now: h.clock.now(),
    });
    expect(acks).toEqual([{ deliveryId, outcomes: { ext_2: 'later' }, now: 4_000 }]);
    expect(h.state(), 'an ack of the delivery out still leads to the cooldown').toBe('cooldown');
    expect(heard, 'no reply but the swapped step would give').toEqual([]);
    replyTo.stop();
    expect(h.consumed()).toEqual([]);
  });
});

describe('delivery rules', () => {
  it('splits at the threshold inclusively and keeps the drained order', () => {
    const { speak, quiet, retry } = judge(
      [event(1), event(2), event(3)],
      [
        { id: 'ext_3', urgency: 0.5 },
        { id: 'ext_1', urgency: 0.49 },
      ],
      0.5,
    );
    expect(speak.map((e) => e.id)).toEqual(['ext_3']);
    expect(quiet.map((e) => e.id)).toEqual(['ext_1']);
    expect(retry.map((e) => e.id)).toEqual(['ext_2']);
  });

  it('dead-letters an event on the failure that reaches maxAttempts', () => {
    expect(retryOrDeadLetter([event(1, 3), event(2, 4)], 5)).toEqual({
      back: [event(1, 4)],
      dead: [event(2, 5)],
    });
  });

  it('refuses an ack of a delivery no agent holds, and tells closed deliveries apart', () => {
    const speak = [{ ...event(1), urgency: 0.9 }];
    const offered: Delivery = {
      deliveryId: 'dlv_1',
      events: speak,
      holder: null,
      holderSession: null,
      leaseExpiresAt: null,
    };
    const held: Delivery = { ...offered, holder: 'a', leaseExpiresAt: 10 };
    const a = { agent: 'a' };
    expect(ackRejection(offered, [], 'dlv_1', undefined, a)).toBe('unknown_delivery');
    expect(ackRejection(held, [], 'dlv_1', undefined, a)).toBeNull();
    expect(ackRejection(held, [], 'dlv_1', undefined, { agent: 'b' })).toBe('not_holder');
    expect(ackRejection(held, [], 'dlv_1', { ext_2: 'told' }, a)).toBe('unknown_event');
    expect(ackRejection(null, [{ deliveryId: 'dlv_0', how: 'expired' }], 'dlv_0', undefined, a)).toBe(
      'lease_expired',
    );
    expect(ackRejection(held, [{ deliveryId: 'dlv_0', how: 'acknowledged' }], 'dlv_0', undefined, a)).toBe(
      'already_acknowledged',
    );
  });

  it('counts an event left out of the outcomes as told', () => {
    const held: Delivery = {
      deliveryId: 'dlv_1',
      events: [
        { ...event(1), urgency: 0.9 },
        { ...event(2), urgency: 0.9 },
      ],
      holder: 'a',
      holderSession: null,
      leaseExpiresAt: 10,
    };
    expect(splitOutcomes(held, { ext_2: 'later' })).toEqual({
      done: [{ event: event(1), fate: 'told' }],
      later: [event(2)],
    });
  });
});
