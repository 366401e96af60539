import { describe, expect, it } from 'vitest';
import { assign, initialTransition, type SnapshotFrom, setup, transition } from 'xstate';
import { createTestModel } from 'xstate/graph';
import { handleParty, ONE_SHOT, type PartyKey, sessionParty } from '../../machines/agent-identity.js';
import { replanMachine } from '../../machines/replan.js';
import type { ReplanEvent } from '../../machines/replan-context.js';
import { owedBy } from '../../machines/replan-decisions.js';
import { ackAnswerIn, unheardReplies } from '../support/replan-answer.js';

/*
 * Several agents of both MCP eras, model-based: a model written from the rule (every agent working
 * when guidance changes owes that change its own ack; a newcomer owes it while no one has
 * acknowledged it; an agent that left is not waited for; an ack frees only the identity that made
 * it) generates paths of joins, changes, acks and departures, and the real replanMachine must
 * answer for each agent what the model says. A speaks 2025-11-25 and is known by its MCP session,
 * which closes when it leaves; B speaks 2026-07-28 and is known by the handle pulse minted for it,
 * which never closes, so B leaves only when a sweep finds it idle. When B acks without its handle
 * it is X to pulse (the one-shot caller): that ack is X's, and never frees B.
 */

const AGENTS = ['A', 'B', 'X'] as const;
type Name = (typeof AGENTS)[number];

/** Who each name is to pulse: A's session, B's handle, and the one-shot caller B is without it. */
const PARTIES: Record<Name, PartyKey> = { A: sessionParty('A'), B: handleParty('handle-of-B'), X: ONE_SHOT };

type ModelEvent =
  | { type: 'join'; agent: 'A' | 'B' }
  | { type: 'leave' }
  | { type: 'sweep' }
  | { type: 'ack'; agent: 'A' | 'B' }
  | { type: 'ackWithoutHandle' }
  | { type: 'change' };

interface ModelContext {
  present: Name[];
  owing: Name[];
  /** A change no agent has acknowledged yet (PulseAgent's pending replan). */
  unclaimed: boolean;
  changes: number;
  /** The answer to the last ack. */
  answer: 'accepted' | 'no_pending_replan' | null;
}

const sorted = (names: Iterable<Name>): Name[] => [...new Set(names)].sort();

/** Agents working then owe it; a newcomer only while no one has acknowledged it (no restart here). */
const joined = (context: ModelContext, agent: Name): Partial<ModelContext> =>
  context.present.includes(agent)
    ? {}
    : {
        present: sorted([...context.present, agent]),
        owing: context.unclaimed ? sorted([...context.owing, agent]) : context.owing,
      };

/** An ack frees the identity that made it, and only that one. */
const acked = (context: ModelContext, agent: Name): Partial<ModelContext> =>
  context.owing.includes(agent)
    ? { owing: context.owing.filter((a) => a !== agent), unclaimed: false, answer: 'accepted' }
    : { answer: 'no_pending_replan' };

const without = (context: ModelContext, gone: Name[]): Partial<ModelContext> => ({
  present: context.present.filter((a) => !gone.includes(a)),
  owing: context.owing.filter((a) => !gone.includes(a)),
  answer: null,
});

const model = setup({
  types: { context: {} as ModelContext, events: {} as ModelEvent },
  guards: {
    absent: ({ context, event }) => event.type === 'join' && !context.present.includes(event.agent),
    present: ({ context, event }) => event.type === 'ack' && context.present.includes(event.agent),
    sessionOpen: ({ context }) => context.present.includes('A'),
    handleKnown: ({ context }) => context.present.includes('B'),
    unclosedKnown: ({ context }) => context.present.some((a) => a !== 'A'),
    fewChanges: ({ context }) => context.changes < 2,
  },
  actions: {
    join: assign(({ context, event }) => ({
      ...joined(context, (event as { agent: Name }).agent),
      answer: null,
    })),
    // A's session closed.
    leave: assign(({ context }) => without(context, ['A'])),
    // Parties that never close (B's handle, the one-shot caller) are dropped once idle.
    sweep: assign(({ context }) => without(context, ['B', 'X'])),
    change: assign(({ context }) => ({
      owing: context.present,
      unclaimed: true,
      changes: context.changes + 1,
      answer: null,
    })),
    ack: assign(({ context, event }) => acked(context, (event as { agent: Name }).agent)),
    // Heard as the one-shot caller first (a newcomer), then its ack is that caller's.
    ackWithoutHandle: assign(({ context }) => {
      const next = { ...context, ...joined(context, 'X') };
      return { ...next, ...acked(next, 'X') };
    }),
  },
}).createMachine({
  context: { present: [], owing: [], unclaimed: false, changes: 0, answer: null },
  on: {
    join: { guard: 'absent', actions: 'join' },
    leave: { guard: 'sessionOpen', actions: 'leave' },
    sweep: { guard: 'unclosedKnown', actions: 'sweep' },
    ack: { guard: 'present', actions: 'ack' },
    ackWithoutHandle: { guard: 'handleKnown', actions: 'ackWithoutHandle' },
    change: { guard: 'fewChanges', actions: 'change' },
  },
});

const events: ModelEvent[] = [
  ...(['A', 'B'] as const).flatMap((agent) => [
    { type: 'join' as const, agent },
    { type: 'ack' as const, agent },
  ]),
  { type: 'leave' },
  { type: 'sweep' },
  { type: 'ackWithoutHandle' },
  { type: 'change' },
];

const testModel = createTestModel(model, { events });
const paths = testModel.getShortestPaths({
  serializeState: (s) => JSON.stringify({ ...(s.context as ModelContext), answer: s.context.answer }),
});

type Snapshot = SnapshotFrom<typeof replanMachine>;
const party = (name: Name) => PARTIES[name];
const GUIDANCE = '.pulse/guidance.md';

/** How the server hears a caller before its tool call: a session closes, a handle and the one-shot caller never do. */
const heard = (name: Name, at: number): ReplanEvent => ({
  type: 'agent.heard',
  party: party(name),
  at,
  closes: name === 'A',
});

const ackBy = (name: Name, latest: string): ReplanEvent => ({
  type: 'replan.ack',
  requestId: 1,
  replyTo: unheardReplies,
  eventId: latest,
  target: { id: latest, path: GUIDANCE },
  planSha256: null,
  at: 'AT',
  agent: party(name),
});

/** The real machine's steps for a model event at time `at`, with the changes' ids numbered in order. */
const realEvents = (event: ModelEvent, changes: number, at: number): ReplanEvent[] => {
  const latest = `evt_${String(changes).padStart(4, '0')}`;
  switch (event.type) {
    case 'join':
      return [heard(event.agent, at)];
    case 'leave':
      return [{ type: 'agent.left', party: party('A') }];
    case 'sweep':
      return [{ type: 'agents.sweep', before: at }];
    case 'change':
      return [
        {
          type: 'log.appended',
          events: [{ id: latest, timestamp: '', kind: 'modified', path: GUIDANCE, sha256: null, size: null }],
        },
      ];
    case 'ack':
      return [ackBy(event.agent, latest)];
    case 'ackWithoutHandle':
      return [heard('X', at), ackBy('X', latest)];
  }
};

describe('replan lifecycle with several agents of both MCP eras (model-based)', () => {
  it(`covers ${paths.length} paths of joins, changes, acks by the right and the wrong identity, and departures`, () => {
    expect(paths.length).toBeGreaterThan(60);
    const kinds = new Set(paths.flatMap((path) => path.steps.map((step) => step.event.type)));
    expect([...kinds].sort()).toEqual(
      ['ack', 'ackWithoutHandle', 'change', 'join', 'leave', 'sweep', 'xstate.init'].sort(),
    );
  });

  for (const path of paths) {
    it(path.description, () => {
      let [snapshot]: [Snapshot, unknown] = initialTransition(replanMachine);
      [snapshot] = transition(replanMachine, snapshot, {
        type: 'replan.restored',
        pending: { pendingEventId: null, pendingFiles: [] },
        lastAck: null,
      });
      let changes = 0;
      let clock = 0;
      for (const step of path.steps) {
        const event = step.event as ModelEvent | { type: 'xstate.init' };
        if (event.type === 'xstate.init') continue;
        if (event.type === 'change') changes++;
        clock++;
        let answer: ReturnType<typeof ackAnswerIn>;
        for (const real of realEvents(event, changes, clock)) {
          const [next, actions] = transition(replanMachine, snapshot, real);
          snapshot = next;
          answer = ackAnswerIn(actions) ?? answer;
        }
        const expected = step.state.context as ModelContext;
        const label = `${event.type} ${'agent' in event ? event.agent : ''}`;
        // An absent party is not asked: pulse answers a newcomer with the change no one has acknowledged.
        for (const name of expected.present) {
          const owes = owedBy(snapshot.context, party(name)) !== null;
          expect(owes, `${label}: does ${name} owe an ack`).toBe(expected.owing.includes(name));
        }
        const pending = expected.unclaimed || expected.owing.length > 0;
        expect(snapshot.value, label).toBe(pending ? 'pending' : changes === 0 ? 'idle' : 'acknowledged');
        if ((event.type === 'ack' || event.type === 'ackWithoutHandle') && expected.answer !== null) {
          const reply = answer!;
          expect(reply.accepted ? 'accepted' : reply.code, label).toBe(expected.answer);
        }
      }
    });
  }
});
