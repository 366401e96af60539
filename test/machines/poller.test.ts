import { afterEach, describe, expect, it } from 'vitest';
import {
  type Actor,
  type ActorRefFrom,
  type ActorSystem,
  createActor,
  fromCallback,
  fromPromise,
  SimulatedClock,
  setup,
  waitFor,
} from 'xstate';
import type { ExternalItem, PolledSource } from '../../machines/external.js';
import type { InboxEventMessage, OfferReply } from '../../machines/inbox-context.js';
import { pollerMachine } from '../../machines/poller.js';
import type { FetchOutcome } from '../../machines/poller-context.js';
import { CATCH_UP_MS, pollRetryDelayMs, RETRY_BASE_MS } from '../../machines/poller-decisions.js';

/*
 * The poller on a simulated clock: a fake fetchItems answers from a script, and a fake inbox
 * (registered as `inbox` in the same system) answers each offer as the test says.
 */

type Offer = Extract<InboxEventMessage, { type: 'inbox.offer' }>;
type Reply = Pick<OfferReply, 'inserted' | 'capped' | 'roomLeft'>;

const INTERVAL_MS = 60_000;

const source: PolledSource = {
  name: 'cal',
  server: 'cal-server',
  tool: 'list_events',
  args: { days: 1 },
  intervalMs: INTERVAL_MS,
  enabled: true,
};

const item = (n: number): ExternalItem => ({
  itemId: `i${n}`,
  title: `Item ${n}`,
  startsAt: null,
  detail: '',
});

interface Harness {
  clock: SimulatedClock;
  root: Actor<ReturnType<typeof harnessMachine>>;
  poller: ActorRefFrom<typeof pollerMachine>;
  /** When each fetch started, on the simulated clock. */
  fetches: number[];
  /** What each fetch was asked to poll. */
  inputs: PolledSource[];
  offers: Offer[];
  /** Outcomes the next fetches return, in order; once empty, fetches list two items. */
  outcomes: Array<(at: number) => FetchOutcome>;
  /** How the inbox answers the next offers; once empty, it takes everything. */
  replies: Reply[];
  /** Lets the promises of fetchItems and the inbox reply settle, with the clock standing still. */
  settle(): Promise<void>;
}

const ok =
  (items: ExternalItem[] = [item(1), item(2)], durationMs = 0) =>
  (at: number): FetchOutcome => ({ ok: true, items, at, durationMs, jitter: 0 });
const failed =
  (error = 'server "cal-server" did not answer', jitter = 0) =>
  (at: number): FetchOutcome => ({ ok: false, error, at, durationMs: 0, jitter });

const harnessMachine = (
  h: Pick<Harness, 'clock' | 'fetches' | 'inputs' | 'offers' | 'outcomes' | 'replies'>,
  polled: PolledSource,
) =>
  setup({
    actors: {
      inbox: fromCallback<Offer>(({ receive }) => {
        receive((offer) => {
          h.offers.push(offer);
          const reply = h.replies.shift() ?? { inserted: offer.items.length, capped: false, roomLeft: 100 };
          offer.replyTo.send({ type: 'inbox.offered', pollId: offer.pollId, ...reply });
        });
      }),
      poller: pollerMachine.provide({
        actors: {
          fetchItems: fromPromise<FetchOutcome, PolledSource>(async ({ input }) => {
            const at = h.clock.now();
            h.fetches.push(at);
            h.inputs.push(input);
            return (h.outcomes.shift() ?? ok())(at);
          }),
        },
      }),
    },
  }).createMachine({
    invoke: [
      { src: 'inbox', id: 'inbox', systemId: 'inbox' },
      { src: 'poller', id: 'poller', systemId: 'poller:cal', input: { source: polled } },
    ],
  });

const running: Actor<ReturnType<typeof harnessMachine>>[] = [];

afterEach(() => {
  for (const root of running.splice(0)) root.stop();
});

const start = async (
  setupHarness: (h: Pick<Harness, 'outcomes' | 'replies'>) => void = () => {},
  polled: PolledSource = source,
): Promise<Harness> => {
  const parts = {
    clock: new SimulatedClock(),
    fetches: [] as number[],
    inputs: [] as PolledSource[],
    offers: [] as Offer[],
    outcomes: [] as Array<(at: number) => FetchOutcome>,
    replies: [] as Reply[],
  };
  setupHarness(parts);
  const root = createActor(harnessMachine(parts, polled), { clock: parts.clock });
  running.push(root);
  root.start();
  const system: ActorSystem<{ actors: { 'poller:cal': ActorRefFrom<typeof pollerMachine> } }> = root.system;
  const poller = system.get('poller:cal')!;
  const settle = async () => {
    await waitFor(poller, (s) => !s.matches('polling') && !s.matches('offering'), { timeout: 1000 });
  };
  await settle();
  return { ...parts, root, poller, settle };
};

/** Advances the simulated clock and lets what it fired run to a resting state. */
const advance = async (h: Harness, ms: number) => {
  h.clock.increment(ms);
  await h.settle();
};

describe('pollerMachine', () => {
  it('polls at once on start and offers what it listed to the inbox', async () => {
    const h = await start();
    expect(h.fetches).toEqual([0]);
    expect(h.inputs).toEqual([source]);
    expect(h.offers).toHaveLength(1);
    expect(h.offers[0]).toMatchObject({ source: 'cal', pollId: 1, items: [item(1), item(2)] });
    const { context } = h.poller.getSnapshot();
    expect(h.poller.getSnapshot().value).toBe('waiting');
    expect(context).toMatchObject({
      polls: 1,
      lastListed: 2,
      lastInserted: 2,
      itemsInserted: 2,
      pending: [],
    });
    expect(context.nextPollAt).toBe(INTERVAL_MS);
  });

  it("waits the source's interval between polls, and not a millisecond less", async () => {
    const h = await start();
    await advance(h, INTERVAL_MS - 1);
    expect(h.fetches).toEqual([0]);
    await advance(h, 1);
    expect(h.fetches).toEqual([0, INTERVAL_MS]);
    await advance(h, INTERVAL_MS);
    expect(h.fetches).toEqual([0, INTERVAL_MS, 2 * INTERVAL_MS]);
    expect(h.poller.getSnapshot().context.polls).toBe(3);
  });

  it('waits a whole interval after a slow call ends, so the server never sees two calls closer than that', async () => {
    // The fake call returns at once on the simulated clock but reports that it took 300 ms.
    const h = await start(({ outcomes }) => outcomes.push(ok(undefined, 300)));
    expect(h.poller.getSnapshot().context).toMatchObject({
      lastDurationMs: 300,
      nextPollAt: INTERVAL_MS + 300,
    });
    await advance(h, INTERVAL_MS - 1);
    expect(h.fetches).toEqual([0]);
    await advance(h, 1);
    expect(h.fetches).toEqual([0, INTERVAL_MS]);
  });

  it('catches up CATCH_UP_MS after a poll that hit the cap while the inbox has room', async () => {
    const h = await start(({ replies }) => replies.push({ inserted: 20, capped: true, roomLeft: 180 }));
    expect(h.poller.getSnapshot().value).toBe('catchingUp');
    expect(h.poller.getSnapshot().context).toMatchObject({ catchUps: 1, nextPollAt: CATCH_UP_MS });
    await advance(h, CATCH_UP_MS - 1);
    expect(h.fetches).toEqual([0]);
    await advance(h, 1);
    expect(h.fetches).toEqual([0, CATCH_UP_MS]);
    // That poll was not capped: back to the regular interval.
    expect(h.poller.getSnapshot().value).toBe('waiting');
    await advance(h, INTERVAL_MS - 1);
    expect(h.fetches).toHaveLength(2);
  });

  it('waits a full interval after a capped poll when the inbox has no room left', async () => {
    const h = await start(({ replies }) => replies.push({ inserted: 5, capped: true, roomLeft: 0 }));
    expect(h.poller.getSnapshot().value).toBe('waiting');
    expect(h.poller.getSnapshot().context.catchUps).toBe(0);
    await advance(h, CATCH_UP_MS);
    expect(h.fetches).toEqual([0]);
    await advance(h, INTERVAL_MS - CATCH_UP_MS);
    expect(h.fetches).toEqual([0, INTERVAL_MS]);
  });

  it('never catches up more slowly than its own interval', async () => {
    const h = await start(({ replies }) => replies.push({ inserted: 20, capped: true, roomLeft: 180 }), {
      ...source,
      intervalMs: 1_000,
    });
    expect(h.poller.getSnapshot().value).toBe('catchingUp');
    await advance(h, 1_000);
    expect(h.fetches).toEqual([0, 1_000]);
  });

  it('backs off after failures with growing delays, and a success resets the failures', async () => {
    const h = await start(({ outcomes }) => outcomes.push(failed(), failed(), failed('still down'), ok()));
    const expected = [1, 2, 3].map((failures) => pollRetryDelayMs(failures, 0));
    expect(expected[0]).toBe(RETRY_BASE_MS / 2);
    expect(expected[1]).toBeGreaterThan(expected[0]!);
    expect(expected[2]).toBeGreaterThan(expected[1]!);

    let at = 0;
    for (const [index, wait] of expected.entries()) {
      const snapshot = h.poller.getSnapshot();
      expect(snapshot.value).toBe('backingOff');
      expect(snapshot.context.failures).toBe(index + 1);
      expect(snapshot.context.nextPollAt).toBe(at + wait);
      await advance(h, wait - 1);
      expect(h.fetches, `no retry before ${wait} ms after failure ${index + 1}`).toHaveLength(index + 1);
      await advance(h, 1);
      at += wait;
      expect(h.fetches.at(-1)).toBe(at);
    }
    expect(h.offers, 'a failed poll offers nothing').toHaveLength(1);
    const recovered = h.poller.getSnapshot();
    expect(recovered.value).toBe('waiting');
    expect(recovered.context).toMatchObject({ failures: 0, lastError: null, itemsInserted: 2 });
  });

  it('records the error of a failed poll and offers nothing', async () => {
    const h = await start(({ outcomes }) => outcomes.push(failed('server "cal-server" answered isError')));
    const { context } = h.poller.getSnapshot();
    expect(context.lastError).toBe('server "cal-server" answered isError');
    expect(context.failures).toBe(1);
    expect(h.offers).toHaveLength(0);
  });

  it('grows the retry delay up to the cap and keeps it there', () => {
    expect(pollRetryDelayMs(1, 1)).toBe(RETRY_BASE_MS);
    expect(pollRetryDelayMs(2, 1)).toBe(2 * RETRY_BASE_MS);
    expect(pollRetryDelayMs(40, 1)).toBe(pollRetryDelayMs(41, 1));
    expect(pollRetryDelayMs(40, 0)).toBe(pollRetryDelayMs(40, 1) / 2);
  });

  it('polls at once on poller.pollNow while waiting, then waits a full interval from there', async () => {
    const h = await start();
    await advance(h, 10_000);
    h.poller.send({ type: 'poller.pollNow' });
    await h.settle();
    expect(h.fetches).toEqual([0, 10_000]);
    await advance(h, INTERVAL_MS - 1);
    expect(h.fetches).toHaveLength(2);
    await advance(h, 1);
    expect(h.fetches).toEqual([0, 10_000, 10_000 + INTERVAL_MS]);
  });

  it('polls at once on poller.pollNow while backing off', async () => {
    const h = await start(({ outcomes }) => outcomes.push(failed()));
    expect(h.poller.getSnapshot().value).toBe('backingOff');
    h.poller.send({ type: 'poller.pollNow' });
    await h.settle();
    expect(h.fetches).toEqual([0, 0]);
    expect(h.poller.getSnapshot().context.failures).toBe(0);
  });
});
