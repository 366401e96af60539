import { afterEach, describe, expect, it } from 'vitest';
import {
  type ActorRefFrom,
  createActor,
  fromCallback,
  fromPromise,
  SimulatedClock,
  setup,
  waitFor,
} from 'xstate';
import type { InboxEvent } from '../../machines/external.js';
import {
  type Delivery,
  type DrainOutput,
  type GateInput,
  gateMachine,
  type Judgement,
  judge,
  retryOrDeadLetter,
} from '../../machines/gate.js';
import type { InboxEventMessage } from '../../machines/inbox.js';

/*
 * The gate on a simulated clock, with a fake inbox (an array: drained whole, put back at the
 * front) and a fake thinker the test scripts per reflection.
 */

type Think = (events: InboxEvent[], now: number) => Promise<Judgement[]>;

const event = (n: number, attempts = 0): InboxEvent => ({
  id: `ext_${n}`,
  source: 'cal',
  item_id: `i${n}`,
  title: `Item ${n}`,
  starts_at: null,
  detail: null,
  received_at: '2026-01-01T00:00:00.000Z',
  attempts,
});

const speakAll =
  (urgency = 0.9): Think =>
  async (events) =>
    events.map((e) => ({ id: e.id, urgency }));

interface Harness {
  clock: SimulatedClock;
  gate: ActorRefFrom<typeof gateMachine>;
  inbox: InboxEvent[];
  think: Think;
  thinkCalls: Array<{ events: InboxEvent[]; now: number }>;
  consumed: string[];
  deadLetters: InboxEvent[];
  announced: Delivery[];
  drains: number;
  settle(): Promise<void>;
  reflect(reason?: 'inserted' | 'timer' | 'checkin'): Promise<void>;
  advance(ms: number): Promise<void>;
  ack(deliveryId: string, outcomes?: Record<string, 'told' | 'not_worth_saying' | 'later'>): void;
  ids(): string[];
}

const running: Array<{ stop(): void }> = [];
afterEach(() => {
  for (const root of running.splice(0)) root.stop();
});

const start = (input: GateInput = {}, inbox: InboxEvent[] = []): Harness => {
  const clock = new SimulatedClock();
  const h = {
    clock,
    inbox,
    think: speakAll(),
    thinkCalls: [],
    consumed: [],
    deadLetters: [],
    announced: [],
    drains: 0,
  } as unknown as Harness;
  const root = createActor(
    setup({
      actors: {
        inbox: fromCallback<InboxEventMessage>(({ receive }) => {
          receive((message) => {
            if (message.type === 'inbox.putBack') h.inbox.unshift(...message.events);
          });
        }),
        gate: gateMachine.provide({
          actors: {
            drainInbox: fromPromise<DrainOutput, { requestId: number }>(async () => {
              h.drains++;
              return { events: h.inbox.splice(0), at: clock.now() };
            }),
            think: fromPromise<Judgement[], { events: InboxEvent[]; now: number }>(async ({ input }) => {
              h.thinkCalls.push(input);
              return h.think(input.events, input.now);
            }),
          },
          actions: {
            consume: (_, { ids }) => {
              h.consumed.push(...ids);
            },
            recordDeadLetters: (_, { events }) => {
              h.deadLetters.push(...events);
            },
            announceDelivery: (_, { delivery }) => {
              h.announced.push(delivery);
            },
          },
        }),
      },
    }).createMachine({
      invoke: [
        { src: 'inbox', id: 'inbox', systemId: 'inbox' },
        { src: 'gate', id: 'gate', systemId: 'gate', input },
      ],
    }),
    { clock },
  );
  running.push(root);
  root.start();
  h.gate = root.system.get('gate');
  h.settle = async () => {
    await waitFor(h.gate, (s) => !s.matches('reflecting') && !s.matches('thinking'), { timeout: 1000 });
  };
  h.reflect = async (reason = 'inserted') => {
    h.gate.send({ type: 'gate.reflect', reason });
    await h.settle();
  };
  h.advance = async (ms) => {
    clock.increment(ms);
    await h.settle();
  };
  h.ack = (deliveryId, outcomes) => {
    h.gate.send({
      type: 'gate.ack',
      requestId: 1,
      deliveryId,
      ...(outcomes ? { outcomes } : {}),
      now: clock.now(),
    });
  };
  h.ids = () => h.inbox.map((e) => e.id);
  return h;
};

const delivery = (h: Harness) => h.gate.getSnapshot().context.delivery!;

describe('gateMachine', () => {
  it('delivers urgent events under a lease and consumes them when told', async () => {
    const h = start({}, [event(1), event(2)]);
    h.clock.set(5_000);
    await h.reflect();
    expect(h.gate.getSnapshot().value).toBe('awaiting');
    const d = delivery(h);
    expect(d.events.map((e) => [e.id, e.urgency])).toEqual([
      ['ext_1', 0.9],
      ['ext_2', 0.9],
    ]);
    expect(d.leaseExpiresAt).toBe(5_000 + 120_000);
    expect(h.announced).toEqual([d]);
    expect(h.thinkCalls[0]!.now).toBe(5_000);
    expect(h.inbox).toEqual([]);

    h.ack(d.deliveryId);
    const { context } = h.gate.getSnapshot();
    expect(context.lastReply).toMatchObject({ accepted: true, consumed: ['ext_1', 'ext_2'], putBack: [] });
    expect(h.consumed).toEqual(['ext_1', 'ext_2']);
    expect(context.delivery).toBeNull();
    expect(context.delivered).toBe(2);
    // cooldownMs defaults to 0: the gate is idle again at once.
    await h.advance(0);
    expect(h.gate.getSnapshot().value).toBe('idle');
  });

  it('consumes events below the threshold silently and puts back the ones the thinker left out', async () => {
    const h = start({}, [event(1), event(2), event(3)]);
    h.think = async () => [
      { id: 'ext_1', urgency: 0.2 },
      { id: 'ext_2', urgency: 0.5 },
      { id: 'nope', urgency: 1 },
    ];
    await h.reflect();
    expect(h.consumed).toEqual(['ext_1']);
    expect(delivery(h).events.map((e) => e.id)).toEqual(['ext_2']);
    expect(h.inbox).toEqual([event(3, 1)]);
    expect(h.gate.getSnapshot().context).toMatchObject({ consumedSilently: 1, putBack: 1 });
  });

  it('goes back to idle without a delivery when nothing is urgent', async () => {
    const h = start({}, [event(1)]);
    h.think = speakAll(0.1);
    await h.reflect();
    expect(h.gate.getSnapshot().value).toBe('idle');
    expect(h.consumed).toEqual(['ext_1']);
    expect(h.announced).toEqual([]);
  });

  it('does not think about an empty inbox', async () => {
    const h = start();
    await h.reflect();
    expect(h.drains).toBe(1);
    expect(h.thinkCalls).toEqual([]);
    expect(h.gate.getSnapshot().value).toBe('idle');
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
      const h = start({}, [event(1), event(2)]);
      h.think = think;
      await h.reflect();
      expect(h.ids()).toEqual(['ext_1', 'ext_2']);
      expect(h.inbox.map((e) => e.attempts)).toEqual([1, 1]);
      expect(h.consumed).toEqual([]);
      const { context, value } = h.gate.getSnapshot();
      expect(value).toBe('idle');
      expect(context.thinkFailures).toBe(1);
      expect(context.lastError).toMatch(error);
    },
  );

  it('treats a thinker that does not answer in time as a failed thought and ignores its late answer', async () => {
    const h = start({ thinkTimeoutMs: 10_000 }, [event(1)]);
    let answer: (j: Judgement[]) => void = () => {};
    h.think = () => new Promise((resolve) => (answer = resolve));
    h.gate.send({ type: 'gate.reflect', reason: 'inserted' });
    await waitFor(h.gate, (s) => s.matches('thinking'));
    await h.advance(10_000);
    expect(h.inbox).toEqual([event(1, 1)]);
    answer([{ id: 'ext_1', urgency: 1 }]);
    await new Promise((r) => setTimeout(r, 5));
    expect(h.gate.getSnapshot().value).toBe('idle');
    expect(h.announced).toEqual([]);
  });

  it('moves an event to the dead letters when it reaches maxAttempts, never back to the inbox', async () => {
    const h = start({ maxAttempts: 3 }, [event(1, 1), event(2, 2)]);
    h.think = async () => {
      throw new Error('down');
    };
    await h.reflect();
    expect(h.inbox).toEqual([event(1, 2)]);
    expect(h.deadLetters).toEqual([event(2, 3)]);
    expect(h.gate.getSnapshot().context).toMatchObject({ deadLettered: 1, deadLetters: [event(2, 3)] });
  });

  it('puts a delivery back when its lease expires, and answers a late ack as expired', async () => {
    const h = start({ leaseMs: 60_000 }, [event(1), event(2)]);
    await h.reflect();
    const { deliveryId } = delivery(h);
    await h.advance(59_999);
    expect(h.gate.getSnapshot().value).toBe('awaiting');
    await h.advance(1);
    expect(h.gate.getSnapshot().value).toBe('idle');
    expect(h.inbox).toEqual([event(1, 1), event(2, 1)]);
    h.ack(deliveryId);
    expect(h.gate.getSnapshot().context.lastReply).toMatchObject({ accepted: false, code: 'lease_expired' });
    expect(h.consumed).toEqual([]);
  });

  it('puts back the events the agent could not deal with now, and consumes the others', async () => {
    const h = start({}, [event(1), event(2), event(3)]);
    await h.reflect();
    h.ack(delivery(h).deliveryId, { ext_1: 'told', ext_2: 'later', ext_3: 'not_worth_saying' });
    expect(h.consumed).toEqual(['ext_1', 'ext_3']);
    expect(h.inbox).toEqual([event(2, 1)]);
    expect(h.gate.getSnapshot().context.lastReply).toMatchObject({
      accepted: true,
      consumed: ['ext_1', 'ext_3'],
      putBack: ['ext_2'],
      deadLettered: [],
    });
  });

  it('answers unknown, duplicate and wrong-event acks with a code and leaves the delivery alone', async () => {
    const h = start({}, [event(1)]);
    await h.reflect();
    const { deliveryId } = delivery(h);
    h.ack('dlv_nope');
    expect(h.gate.getSnapshot().context.lastReply).toMatchObject({
      accepted: false,
      code: 'unknown_delivery',
    });
    expect(h.gate.getSnapshot().context.lastReply!.reason).toContain(`The delivery out now is ${deliveryId}`);
    h.ack(deliveryId, { ext_9: 'told' });
    expect(h.gate.getSnapshot().context.lastReply).toMatchObject({ accepted: false, code: 'unknown_event' });
    expect(h.gate.getSnapshot().value).toBe('awaiting');
    h.ack(deliveryId);
    expect(h.gate.getSnapshot().context.lastReply).toMatchObject({ accepted: true });
    h.ack(deliveryId);
    expect(h.gate.getSnapshot().context.lastReply).toMatchObject({
      accepted: false,
      code: 'already_acknowledged',
    });
    expect(h.consumed).toEqual(['ext_1']);
  });

  it('leaves the inbox untouched while a delivery is out, and reflects once it is acknowledged', async () => {
    const h = start({}, [event(1)]);
    await h.reflect();
    h.inbox.push(event(2));
    await h.reflect('checkin');
    expect(h.drains).toBe(1);
    expect(h.ids()).toEqual(['ext_2']);
    expect(h.gate.getSnapshot().context).toMatchObject({ lastGate: 'awaiting', deferred: true });
    h.ack(delivery(h).deliveryId);
    await h.advance(0);
    expect(h.drains).toBe(2);
    expect(delivery(h).events.map((e) => e.id)).toEqual(['ext_2']);
  });

  it('holds reflections during the cooldown and runs the held one when it ends', async () => {
    const h = start({ cooldownMs: 30_000 }, [event(1)]);
    await h.reflect();
    h.ack(delivery(h).deliveryId);
    expect(h.gate.getSnapshot().value).toBe('cooldown');
    h.inbox.push(event(2));
    await h.reflect();
    expect(h.drains).toBe(1);
    expect(h.gate.getSnapshot().context.gated.cooldown).toBe(1);
    await h.advance(29_999);
    expect(h.drains).toBe(1);
    await h.advance(1);
    expect(h.drains).toBe(2);
    expect(h.gate.getSnapshot().value).toBe('awaiting');
  });

  it('holds reflections while the user is in focus, until the focus time passes', async () => {
    const h = start({}, [event(1)]);
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
    const h = start({}, [event(1)]);
    h.gate.send({ type: 'gate.focus', until: 60_000, now: 0 });
    await h.reflect();
    h.gate.send({ type: 'gate.focus', until: null, now: 1_000 });
    await h.settle();
    expect(h.drains).toBe(1);
    h.gate.send({ type: 'gate.focus', until: 500, now: 1_000 });
    expect(h.gate.getSnapshot().context.focusUntil).toBeNull();
  });

  it('waits out a focus longer than a timer can hold', async () => {
    const h = start({}, [event(1)]);
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
    const h = start({}, [event(1)]);
    h.gate.send({ type: 'replan.status', pending: true });
    await h.reflect();
    expect(h.drains).toBe(0);
    expect(h.gate.getSnapshot().context.lastGate).toBe('answering');
    h.gate.send({ type: 'replan.status', pending: false });
    await h.settle();
    expect(h.drains).toBe(1);
  });

  it('checks the gates in order: awaiting, focus, answering, cooldown', async () => {
    const h = start({ cooldownMs: 10_000 }, [event(1)]);
    await h.reflect();
    h.gate.send({ type: 'gate.focus', until: 1_000_000, now: 0 });
    h.gate.send({ type: 'replan.status', pending: true });
    await h.reflect();
    expect(h.gate.getSnapshot().context.lastGate).toBe('awaiting');
    h.ack(delivery(h).deliveryId);
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
    const h = start({ reflectEveryMs: 120_000 }, [event(1)]);
    await h.advance(119_999);
    expect(h.drains).toBe(0);
    await h.advance(1);
    expect(h.drains).toBe(1);
    expect(h.gate.getSnapshot().value).toBe('awaiting');
  });

  it('runs a reflection asked for during another one right after it', async () => {
    const h = start({}, [event(1)]);
    h.think = speakAll(0.1);
    h.gate.send({ type: 'gate.reflect', reason: 'inserted' });
    h.gate.send({ type: 'gate.reflect', reason: 'checkin' });
    await h.settle();
    await waitFor(h.gate, () => h.drains === 2, { timeout: 1000 });
  });
});

describe('judge and retryOrDeadLetter', () => {
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
});
