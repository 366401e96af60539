import { describe, expect, it } from 'vitest';
import { assign, initialTransition, type SnapshotFrom, setup, transition } from 'xstate';
import { createTestModel } from 'xstate/graph';
import { replanMachine } from '../../machines/replan.js';
import type { ReplanEvent } from '../../machines/replan-context.js';
import { owedBy } from '../../machines/replan-decisions.js';

/*
 * Several agents, model-based: a model written from the rule (every agent working when guidance
 * changes owes that change its own ack; a newcomer owes it while no one has acknowledged it; an
 * agent that left is not waited for) generates paths of joins, changes, acks
 * and departures, and the real replanMachine must answer for each agent what the model says.
 */

const AGENTS = ['A', 'B'] as const;
type Name = (typeof AGENTS)[number];

type ModelEvent =
  | { type: 'join'; agent: Name }
  | { type: 'leave'; agent: Name }
  | { type: 'ack'; agent: Name }
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

const model = setup({
  types: { context: {} as ModelContext, events: {} as ModelEvent },
  guards: {
    absent: ({ context, event }) => 'agent' in event && !context.present.includes(event.agent),
    present: ({ context, event }) => 'agent' in event && context.present.includes(event.agent),
    fewChanges: ({ context }) => context.changes < 2,
  },
  actions: {
    join: assign(({ context, event }) => {
      const agent = (event as { agent: Name }).agent;
      // Agents working then owe it; a newcomer only while no one has acknowledged it (no restart here).
      const owesOnArrival = context.unclaimed;
      return {
        present: sorted([...context.present, agent]),
        owing: owesOnArrival ? sorted([...context.owing, agent]) : context.owing,
        answer: null,
      };
    }),
    leave: assign(({ context, event }) => {
      const agent = (event as { agent: Name }).agent;
      return {
        present: context.present.filter((a) => a !== agent),
        owing: context.owing.filter((a) => a !== agent),
        answer: null,
      };
    }),
    change: assign(({ context }) => ({
      owing: context.present,
      unclaimed: true,
      changes: context.changes + 1,
      answer: null,
    })),
    ack: assign(({ context, event }) => {
      const agent = (event as { agent: Name }).agent;
      if (!context.owing.includes(agent)) return { answer: 'no_pending_replan' as const };
      return {
        owing: context.owing.filter((a) => a !== agent),
        unclaimed: false,
        answer: 'accepted' as const,
      };
    }),
  },
}).createMachine({
  context: { present: [], owing: [], unclaimed: false, changes: 0, answer: null },
  on: {
    join: { guard: 'absent', actions: 'join' },
    leave: { guard: 'present', actions: 'leave' },
    ack: { guard: 'present', actions: 'ack' },
    change: { guard: 'fewChanges', actions: 'change' },
  },
});

const events: ModelEvent[] = [
  ...AGENTS.flatMap((agent) => [
    { type: 'join' as const, agent },
    { type: 'leave' as const, agent },
    { type: 'ack' as const, agent },
  ]),
  { type: 'change' },
];

const testModel = createTestModel(model, { events });
const paths = testModel.getShortestPaths({
  serializeState: (s) => JSON.stringify({ ...(s.context as ModelContext), answer: s.context.answer }),
});

type Snapshot = SnapshotFrom<typeof replanMachine>;
const party = (name: Name) => `session:${name}`;
const GUIDANCE = '.pulse/guidance.md';

/** The real machine's step for a model event, with the changes' ids numbered in order. */
const realEvent = (event: ModelEvent, changes: number): ReplanEvent => {
  const latest = `evt_${String(changes).padStart(4, '0')}`;
  switch (event.type) {
    case 'join':
      return { type: 'agent.heard', party: party(event.agent), at: 0, closes: true };
    case 'leave':
      return { type: 'agent.left', party: party(event.agent) };
    case 'change':
      return {
        type: 'log.appended',
        events: [{ id: latest, timestamp: '', kind: 'modified', path: GUIDANCE, sha256: null, size: null }],
      };
    case 'ack':
      return {
        type: 'replan.ack',
        requestId: 1,
        eventId: latest,
        target: { id: latest, path: GUIDANCE },
        planSha256: null,
        at: 'AT',
        agent: party(event.agent),
      };
  }
};

describe('replan lifecycle with several agents (model-based)', () => {
  it(`covers ${paths.length} paths of joins, changes, acks and departures`, () => {
    expect(paths.length).toBeGreaterThan(20);
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
      for (const step of path.steps) {
        const event = step.event as ModelEvent | { type: 'xstate.init' };
        if (event.type === 'xstate.init') continue;
        if (event.type === 'change') changes++;
        [snapshot] = transition(replanMachine, snapshot, realEvent(event, changes));
        const expected = step.state.context as ModelContext;
        const label = `${event.type} ${'agent' in event ? event.agent : ''}`;
        for (const name of expected.present) {
          const owes = owedBy(snapshot.context, party(name)) !== null;
          expect(owes, `${label}: does ${name} owe an ack`).toBe(expected.owing.includes(name));
        }
        const pending = expected.unclaimed || expected.owing.length > 0;
        expect(snapshot.value, label).toBe(pending ? 'pending' : changes === 0 ? 'idle' : 'acknowledged');
        if (event.type === 'ack' && expected.answer !== null) {
          const reply = snapshot.context.lastReply!;
          expect(reply.accepted ? 'accepted' : reply.code, label).toBe(expected.answer);
        }
      }
    });
  }
});
