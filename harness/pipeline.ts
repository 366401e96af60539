import {
  type ActorRefFrom,
  createActor,
  fromCallback,
  fromPromise,
  type InspectionEvent,
  type SimulatedClock,
  type SnapshotFrom,
  setup,
} from 'xstate';
import type { AckOutcome, Caller, Delivery, Thought } from '../machines/delivery-rules.js';
import type { ExternalItem, InboxEvent, PolledSource } from '../machines/external.js';
import { gateMachine } from '../machines/gate.js';
import type { ClaimAnswer, GateAckAnswer } from '../machines/gate-context.js';
import type { GateInput } from '../machines/gate-settings.js';
import { inboxMachine } from '../machines/inbox.js';
import type {
  AcceptInput,
  AcceptOutput,
  LoadedInbox,
  OfferReply,
  SettlementWrite,
} from '../machines/inbox-context.js';
import { pollerMachine } from '../machines/poller.js';
import type { FetchOutcome } from '../machines/poller-context.js';
import { ask } from '../src/system/ask.js';
import { drainFromInbox } from '../src/system/drain-inbox.js';

/*
 * The daemon's external-events pipeline in memory: the real inbox machine, and the real gate and
 * poller machines when asked for, in one actor system on a simulated clock, each effect provided
 * by the caller. The gate machine test, the gate and poller model tests, the no-repeats test and
 * the delivery simulation (sim/) all build it here. No vitest: sim/ runs it under plain Node.
 */

/** The gate's `think` effect: the events of one reflection and the time, to a thought. */
type Think = (input: { events: InboxEvent[]; now: number }) => Promise<Thought>;

/** Named gate actions a caller swaps for its own. */
export type GateActions = NonNullable<Parameters<typeof gateMachine.provide>[0]['actions']>;

type PollerDelays = NonNullable<Parameters<typeof pollerMachine.provide>[0]['delays']>;

/** What a pipeline is made of: the clock, and each machine's input and effects. */
export interface PipelineParts {
  clock: SimulatedClock;
  inbox: {
    input?: { capacity?: number; perTickCap?: number };
    /** What `loadInbox` restores; an empty inbox when left out. */
    load?: () => Promise<LoadedInbox>;
    accept: (input: AcceptInput) => Promise<AcceptOutput>;
    /** Writes a settlement; written at once when left out. */
    persist?: (write: SettlementWrite) => Promise<void>;
    /** `false`: an insert does not wake the gate, for tests that ask for every reflection themselves. */
    wakesGate?: boolean;
  };
  gate?: {
    input: GateInput;
    think: Think;
    /** Runs before each drain: a throw fails that drain, having taken nothing. */
    beforeDrain?: () => void;
    actions?: GateActions;
  };
  poller?: {
    source: PolledSource;
    fetch: (source: PolledSource) => Promise<FetchOutcome>;
    delays?: PollerDelays;
  };
  inspect?: (event: InspectionEvent) => void;
}

/** The inbox is idle: no offer waiting or being accepted, no settlement being written. */
export const inboxAtRest = (s: SnapshotFrom<typeof inboxMachine>): boolean =>
  s.matches({ ready: { offers: 'idle', settlements: 'idle' } }) && s.context.offers.length === 0;

/** An item as a source lists it, with a title and nothing else. */
export const listedItem = (itemId: string, title: string): ExternalItem => ({
  itemId,
  title,
  startsAt: null,
  detail: '',
});

/**
 * An acceptor without files: an item it has not taken before enters as an event whose id is the
 * item's, up to the limit; the rest of the unseen ones make the poll capped.
 */
export const acceptUnseen = () => {
  const seen = new Set<string>();
  return async (input: AcceptInput): Promise<AcceptOutput> => {
    const unseen = input.items.filter((item) => !seen.has(item.itemId));
    const taken = unseen.slice(0, input.limit);
    for (const item of taken) seen.add(item.itemId);
    const inserted: InboxEvent[] = taken.map((item) => ({
      id: item.itemId,
      source: input.source,
      item_id: item.itemId,
      title: item.title,
      starts_at: null,
      detail: null,
      received_at: '2026-01-01T00:00:00.000Z',
      attempts: 0,
    }));
    return { inserted, capped: unseen.length > taken.length };
  };
};

/** Builds the pipeline, not yet started: the inbox first, so it is there for the first offer or drain. */
export const createPipeline = ({ clock, inbox, gate, poller, inspect }: PipelineParts) => {
  const pollerId = `poller:${poller?.source.name}`;
  const machine = setup({
    actors: {
      inbox: inboxMachine.provide({
        actors: {
          loadInbox: fromPromise<LoadedInbox>(inbox.load ?? (async () => ({ events: [], deadLetters: [] }))),
          acceptItems: fromPromise<AcceptOutput, AcceptInput>(({ input }) => inbox.accept(input)),
          persistSettlement: fromPromise<void, SettlementWrite>(({ input }) =>
            (inbox.persist ?? (async () => {}))(input),
          ),
        },
        actions: inbox.wakesGate === false ? { wakeGate: () => {} } : {},
      }),
      gate: gateMachine.provide({
        actors: {
          drainInbox: fromPromise(async ({ system }) => {
            gate?.beforeDrain?.();
            return { events: await drainFromInbox(system), at: clock.now() };
          }),
          think: fromPromise<Thought, { events: InboxEvent[]; now: number }>(({ input }) =>
            gate!.think(input),
          ),
        },
        actions: gate?.actions ?? {},
      }),
      poller: pollerMachine.provide({
        actors: { fetchItems: fromPromise<FetchOutcome, PolledSource>(({ input }) => poller!.fetch(input)) },
        delays: poller?.delays ?? {},
      }),
    },
  }).createMachine({
    invoke: [
      { src: 'inbox', id: 'inbox', systemId: 'inbox', input: inbox.input ?? {} },
      ...(gate === undefined
        ? []
        : [{ src: 'gate', id: 'gate', systemId: 'gate', input: gate.input } as const]),
      ...(poller === undefined
        ? []
        : [{ src: 'poller', id: 'poller', systemId: pollerId, input: { source: poller.source } } as const]),
    ],
  });
  const root = createActor(machine, { clock, ...(inspect === undefined ? {} : { inspect }) });
  // Hears the inbox's replies to the offers made here, as a poller would, and keeps none.
  const replyTo = createActor(fromCallback<OfferReply>(() => {}));
  let requests = 0;

  const pipeline = {
    clock,
    root,
    start() {
      replyTo.start();
      root.start();
    },
    stop() {
      root.stop();
      replyTo.stop();
    },
    inbox: (): ActorRefFrom<typeof inboxMachine> => root.system.get('inbox'),
    gate: (): ActorRefFrom<typeof gateMachine> => root.system.get('gate'),
    poller: (): ActorRefFrom<typeof pollerMachine> => root.system.get(pollerId),
    /** Offers items to the inbox as a poller of `source` on `server` would; returns the poll id. */
    offer(source: string, server: string, items: ExternalItem[]): number {
      const pollId = ++requests;
      pipeline.inbox().send({ type: 'inbox.offer', pollId, source, server, items, replyTo });
      return pollId;
    },
    /** An agent's claim at the clock's now: the gate answers at once. */
    claim(caller: Caller): Promise<ClaimAnswer> {
      return ask(pipeline.gate(), (asking) => ({
        type: 'gate.claim',
        ...asking,
        ...caller,
        now: clock.now(),
      }));
    },
    /** An agent's ack at the clock's now: answered at once when refused, once the inbox wrote its settlement when accepted. */
    ack(deliveryId: string, caller: Caller, outcomes?: Record<string, AckOutcome>): Promise<GateAckAnswer> {
      return ask(pipeline.gate(), (asking) => ({
        type: 'gate.ack',
        ...asking,
        deliveryId,
        ...(outcomes ? { outcomes } : {}),
        ...caller,
        now: clock.now(),
      }));
    },
    /**
     * Whether the poller, the inbox or the gate still has work under way at this instant: a
     * stepped clock may move on only once all three are at rest.
     */
    busy(): boolean {
      const p = pipeline.poller().getSnapshot();
      const g = pipeline.gate().getSnapshot();
      return (
        p.matches('polling') ||
        p.matches('offering') ||
        !inboxAtRest(pipeline.inbox().getSnapshot()) ||
        g.matches('reflecting') ||
        g.matches('thinking')
      );
    },
    /**
     * An agent that takes every delivery at once, all told: it claims the one set aside and
     * acknowledges the one it holds. Returns what it acknowledged and the gate's reply, or null.
     */
    async takeDelivery(agent: string): Promise<{ delivery: Delivery; reply: GateAckAnswer } | null> {
      const gateRef = pipeline.gate();
      if (gateRef.getSnapshot().matches('offered')) await pipeline.claim({ agent });
      const { delivery } = gateRef.getSnapshot().context;
      if (!gateRef.getSnapshot().matches('awaiting') || delivery === null) return null;
      return { delivery, reply: await pipeline.ack(delivery.deliveryId, { agent }) };
    },
  };
  return pipeline;
};

/** A pipeline built by `createPipeline`. */
export type Pipeline = ReturnType<typeof createPipeline>;
