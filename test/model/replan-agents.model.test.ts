import { describe, expect, it } from 'vitest';
import { assign, initialTransition, type SnapshotFrom, setup, transition } from 'xstate';
import { createTestModel } from 'xstate/graph';
import { handleParty, ONE_SHOT, type PartyKey, sessionParty } from '../../machines/agent-identity.js';
import { replanMachine } from '../../machines/replan.js';
import { recordsAgents, savedAgents } from '../../machines/replan-agents.js';
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
 * it is X to pulse (the one-shot caller): that ack is X's, and never frees B. The daemon may
 * restart once: A's session dies with it (an owing A stays a ghost until idle, when state.json
 * recorded it), B and X are taken over with what they owe, and a newcomer owes what no one has
 * acknowledged or what an agent taken over still owes, whoever acknowledged since.
 */

const AGENTS = ['A', 'B', 'X'] as const;
type Name = (typeof AGENTS)[number];

/** Who each name is to pulse: A's session (a new one after each restart), B's handle, and the one-shot caller B is without it. */
const partyOf = (name: Name, restarts: number): PartyKey =>
  name === 'A' ? sessionParty(`A${restarts}`) : name === 'B' ? handleParty('handle-of-B') : ONE_SHOT;

type ModelEvent =
  | { type: 'restart' }
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
  restarts: number;
  /** state.json holds the agents (`recordsAgents`, once true, stays): a restart takes them over. */
  recorded: boolean;
  /** Those a restart took over and that are still here. */
  takenOver: Name[];
  /** A's session, dead with the old daemon, still owing: kept, as a newcomer might be A reconnected. */
  ghost: boolean;
}

const sorted = (names: Iterable<Name>): Name[] => [...new Set(names)].sort();

/** What a newcomer owes: a change no one has acknowledged, or one an agent a restart took over still owes. */
const newcomerOwes = (context: ModelContext): boolean =>
  context.unclaimed || context.ghost || context.takenOver.some((a) => context.owing.includes(a));

/** Agents working then owe it; a newcomer owes what `newcomerOwes` says. */
const joined = (context: ModelContext, agent: Name): Partial<ModelContext> =>
  context.present.includes(agent)
    ? {}
    : {
        present: sorted([...context.present, agent]),
        owing: newcomerOwes(context) ? sorted([...context.owing, agent]) : context.owing,
      };

/** state.json records the agents once there are two, or one that outlives a restart (not A's session alone). */
const recording = (context: ModelContext): boolean =>
  context.recorded ||
  context.present.length + (context.ghost ? 1 : 0) > 1 ||
  context.present.some((a) => a !== 'A');

/** An ack frees the identity that made it, and only that one. */
const acked = (context: ModelContext, agent: Name): Partial<ModelContext> =>
  context.owing.includes(agent)
    ? { owing: context.owing.filter((a) => a !== agent), unclaimed: false, answer: 'accepted' }
    : { answer: 'no_pending_replan' };

const without = (context: ModelContext, gone: Name[]): Partial<ModelContext> => ({
  present: context.present.filter((a) => !gone.includes(a)),
  owing: context.owing.filter((a) => !gone.includes(a)),
  takenOver: context.takenOver.filter((a) => !gone.includes(a)),
  answer: null,
});

/** The daemon restarts: A's session dies, what state.json recorded is taken over. */
const restarted = (context: ModelContext): Partial<ModelContext> => {
  const lasting: Name[] = context.recorded ? context.present.filter((a) => a !== 'A') : [];
  return {
    present: lasting,
    owing: context.owing.filter((a) => lasting.includes(a)),
    takenOver: lasting,
    ghost: context.recorded && (context.ghost || context.owing.includes('A')),
    restarts: context.restarts + 1,
    answer: null,
  };
};

const model = setup({
  types: { context: {} as ModelContext, events: {} as ModelEvent },
  guards: {
    absent: ({ context, event }) => event.type === 'join' && !context.present.includes(event.agent),
    present: ({ context, event }) => event.type === 'ack' && context.present.includes(event.agent),
    sessionOpen: ({ context }) => context.present.includes('A'),
    handleKnown: ({ context }) => context.present.includes('B'),
    unclosedKnown: ({ context }) => context.ghost || context.present.some((a) => a !== 'A'),
    fewChanges: ({ context }) => context.changes < 2,
    noRestartYet: ({ context }) => context.restarts === 0,
  },
  actions: {
    join: assign(({ context, event }) => {
      const next = { ...context, ...joined(context, (event as { agent: Name }).agent), answer: null };
      return { ...next, recorded: recording(next) };
    }),
    // A's session closed.
    leave: assign(({ context }) => without(context, ['A'])),
    // Parties that never close (B's handle, the one-shot caller, a dead session taken over) are dropped once idle.
    sweep: assign(({ context }) => ({ ...without(context, ['B', 'X']), ghost: false })),
    restart: assign(({ context }) => restarted(context)),
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
      return { ...next, ...acked(next, 'X'), recorded: recording(next) };
    }),
  },
}).createMachine({
  context: {
    present: [],
    owing: [],
    unclaimed: false,
    changes: 0,
    answer: null,
    restarts: 0,
    recorded: false,
    takenOver: [],
    ghost: false,
  },
  on: {
    join: { guard: 'absent', actions: 'join' },
    leave: { guard: 'sessionOpen', actions: 'leave' },
    sweep: { guard: 'unclosedKnown', actions: 'sweep' },
    ack: { guard: 'present', actions: 'ack' },
    ackWithoutHandle: { guard: 'handleKnown', actions: 'ackWithoutHandle' },
    change: { guard: 'fewChanges', actions: 'change' },
    restart: { guard: 'noRestartYet', actions: 'restart' },
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
  { type: 'restart' },
];

const testModel = createTestModel(model, { events });
const paths = testModel.getShortestPaths({
  serializeState: (s) => JSON.stringify({ ...(s.context as ModelContext), answer: s.context.answer }),
});

type Snapshot = SnapshotFrom<typeof replanMachine>;
const GUIDANCE = '.pulse/guidance.md';

/** How the server hears a caller before its tool call: a session closes, a handle and the one-shot caller never do. */
const heard = (party: PartyKey, at: number): ReplanEvent => ({
  type: 'agent.heard',
  party,
  at,
  closes: party.startsWith('session:'),
});

const ackBy = (party: PartyKey, latest: string): ReplanEvent => ({
  type: 'replan.ack',
  requestId: 1,
  replyTo: unheardReplies,
  eventId: latest,
  target: { id: latest, path: GUIDANCE },
  planSha256: null,
  at: 'AT',
  agent: party,
});

/** The real machine's steps for a model event at time `at`, with the changes' ids numbered in order (a restart is not one). */
const realEvents = (
  event: Exclude<ModelEvent, { type: 'restart' }>,
  changes: number,
  at: number,
  party: (name: Name) => PartyKey,
): ReplanEvent[] => {
  const latest = `evt_${String(changes).padStart(4, '0')}`;
  switch (event.type) {
    case 'join':
      return [heard(party(event.agent), at)];
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
      return [ackBy(party(event.agent), latest)];
    case 'ackWithoutHandle':
      return [heard(party('X'), at), ackBy(party('X'), latest)];
  }
};

/** A new daemon's lifecycle, taking over what state.json holds of the old one's (the agents only when recorded). */
const restartedMachine = (old: Snapshot, recorded: boolean, at: number): Snapshot =>
  transition(replanMachine, initialTransition(replanMachine)[0], {
    type: 'replan.restored',
    pending: old.context.unclaimed,
    lastAck: old.context.lastAck,
    agents: recorded ? savedAgents(old.context.agents) : [],
    at,
  })[0];

describe('replan lifecycle with several agents of both MCP eras (model-based)', () => {
  it(`covers ${paths.length} paths of joins, changes, acks by the right and the wrong identity, departures and a restart`, () => {
    expect(paths.length).toBeGreaterThan(60);
    const kinds = new Set(paths.flatMap((path) => path.steps.map((step) => step.event.type)));
    expect([...kinds].sort()).toEqual(
      ['ack', 'ackWithoutHandle', 'change', 'join', 'leave', 'restart', 'sweep', 'xstate.init'].sort(),
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
      let restarts = 0;
      // Whether state.json holds the agents: set at a write that `recordsAgents` allows, kept after.
      let recorded = false;
      const party = (name: Name) => partyOf(name, restarts);
      for (const step of path.steps) {
        const event = step.event as ModelEvent | { type: 'xstate.init' };
        if (event.type === 'xstate.init') continue;
        if (event.type === 'change') changes++;
        clock++;
        let answer: ReturnType<typeof ackAnswerIn>;
        if (event.type === 'restart') {
          snapshot = restartedMachine(snapshot, recorded, clock);
          restarts++;
        } else {
          for (const real of realEvents(event, changes, clock, party)) {
            const [next, actions] = transition(replanMachine, snapshot, real);
            snapshot = next;
            answer = ackAnswerIn(actions) ?? answer;
          }
        }
        recorded ||= recordsAgents(savedAgents(snapshot.context.agents));
        const expected = step.state.context as ModelContext;
        const label = `${event.type} ${'agent' in event ? event.agent : ''}`;
        for (const name of expected.present) {
          const owes = owedBy(snapshot.context, party(name)) !== null;
          expect(owes, `${label}: does ${name} owe an ack`).toBe(expected.owing.includes(name));
        }
        const newcomer = owedBy(snapshot.context, sessionParty('newcomer')) !== null;
        expect(newcomer, `${label}: does a newcomer owe an ack`).toBe(newcomerOwes(expected));
        const pending = expected.unclaimed || expected.owing.length > 0 || expected.ghost;
        expect(snapshot.value, label).toBe(pending ? 'pending' : changes === 0 ? 'idle' : 'acknowledged');
        if ((event.type === 'ack' || event.type === 'ackWithoutHandle') && expected.answer !== null) {
          const reply = answer!;
          expect(reply.accepted ? 'accepted' : reply.code, label).toBe(expected.answer);
        }
      }
    });
  }
});
