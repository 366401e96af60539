import { assign, type EventObject, enqueueActions, fromCallback, not, sendTo, setup } from 'xstate';
import type { ClientInfo, PartyKey } from './agent-identity.js';
import type { FileFault } from './log-faults.js';
import type { PlanSnapshot } from './plan-diff.js';
import type { PulseEvent } from './pulse-files.js';
import { agentIdOf, savedAgents, sweeps, type TieWay } from './replan-agents.js';
import {
  type AckEvent,
  type AckToAnswer,
  INITIAL_REPLAN_CONTEXT,
  type ReplanContext,
  type ReplanEvent,
  type ReplanRecord,
  type Restored,
} from './replan-context.js';
import * as decisions from './replan-decisions.js';
import type { ReplyOut } from './reply.js';

/** What `saveState` records when no ack asked for it: the agents alone changed. */
const NO_ACK = { answers: null };

/**
 * The replan lifecycle: idle → pending → acknowledged, and back to pending on every new
 * guidance or constraints event. Every agent working when the change comes owes it an ack of its
 * own, so the lifecycle is pending while any agent (or a newcomer) still owes it. Decisions only;
 * the event log makes the ack and the agents durable.
 */
export const replanMachine = setup({
  types: {
    context: {} as ReplanContext,
    events: {} as ReplanEvent,
  },
  actors: {
    /** Sends `agents.sweep` now and then, so agents gone quiet stop being waited for (the wiring provides the clock). */
    agentClock: fromCallback<EventObject>(() => undefined),
  },
  guards: {
    hasInvalidating: (_, { events }: { events: PulseEvent[] }) => decisions.hasInvalidating(events),
    someoneOwes: ({ context }) => context.pendingEventId !== null,
    everAcknowledged: ({ context }) => context.lastAck !== null,
    isAcceptable: ({ context }, { ack }: { ack: AckEvent }) =>
      decisions.replanAckRejection(context, ack) === null,
    isNewParty: ({ context }, { party }: { party: PartyKey }) =>
      agentIdOf(context.agents, party) === undefined,
    isKnownParty: ({ context }, { party }: { party: PartyKey }) =>
      agentIdOf(context.agents, party) !== undefined,
    sweepDrops: ({ context }, { before }: { before: number }) => sweeps(context.agents, before),
  },
  actions: {
    restore: assign((_, restored: Restored) => decisions.restored(restored)),
    recordInvalidation: assign(
      ({ context }, { events, plan }: { events: PulseEvent[]; plan?: PlanSnapshot }) =>
        decisions.invalidated(context, events, plan),
    ),
    recordBlind: assign((_, { blind }: { blind: FileFault[] }) => ({ blind })),
    hearParty: assign(
      ({ context }, heard: { party: PartyKey; at: number; closes: boolean; client?: ClientInfo }) =>
        decisions.heard(context, heard),
    ),
    dropParty: assign(({ context }, { party }: { party: PartyKey }) => decisions.left(context, party)),
    sweepParties: assign(({ context }, { before }: { before: number }) => decisions.swept(context, before)),
    tieParties: assign(({ context }, { parties, by }: { parties: [PartyKey, PartyKey]; by: TieWay }) =>
      decisions.tied(context, parties, by),
    ),
    /** Answers a request: the reply goes to the asker's `replyTo`. */
    reply: sendTo(
      (_, { to }: ReplyOut) => to,
      (_, { event }: ReplyOut) => event,
    ),
    acceptAck: assign(({ context }, { ack }: { ack: AckEvent }) => decisions.ackAccepted(context, ack)),
    /**
     * Tells the reflection gate (when the system has one) whether no agent has replanned yet (or
     * pulse is blind); an agent that still owes its own ack is refused deliveries at its check-in.
     */
    notifyGate: enqueueActions(({ context, enqueue, system }) => {
      const gate = system.get('gate');
      const status = { type: 'replan.status', pending: decisions.gateHolds(context) } as const;
      if (gate !== undefined) enqueue.sendTo(gate, status);
    }),
    /** Asks the event log to write the last ack and the agents to state.json, and to answer the ack accepted (if any) once written. */
    saveState: sendTo(
      ({ system }) => system.get('log'),
      ({ context }, { answers }: { answers: AckToAnswer | null }): ReplanRecord => ({
        type: 'replan.record',
        ack: context.lastAck,
        agents: savedAgents(context.agents),
        acks: context.acks,
        answers,
      }),
    ),
  },
}).createMachine({
  id: 'replan',
  context: INITIAL_REPLAN_CONTEXT,
  invoke: { src: 'agentClock' },
  // Every step only records; each state's eventless transitions then follow who still owes.
  on: {
    // Orthogonal to the lifecycle: acks are judged as ever, and the answers say the plan is on hold.
    'log.faults': { actions: [{ type: 'recordBlind', params: ({ event }) => event }, 'notifyGate'] },
    // Not saved: on restart every agent owes what the log holds after the last ack.
    'log.appended': {
      guard: { type: 'hasInvalidating', params: ({ event }) => event },
      actions: [{ type: 'recordInvalidation', params: ({ event }) => event }, 'notifyGate'],
    },
    'agent.heard': [
      {
        guard: { type: 'isNewParty', params: ({ event }) => ({ party: event.party }) },
        actions: [
          { type: 'hearParty', params: ({ event }) => event },
          { type: 'saveState', params: NO_ACK },
        ],
      },
      { actions: { type: 'hearParty', params: ({ event }) => event } },
    ],
    'agent.left': {
      guard: { type: 'isKnownParty', params: ({ event }) => ({ party: event.party }) },
      actions: [
        { type: 'dropParty', params: ({ event }) => ({ party: event.party }) },
        { type: 'saveState', params: NO_ACK },
      ],
    },
    'agents.sweep': {
      guard: { type: 'sweepDrops', params: ({ event }) => ({ before: event.before }) },
      actions: [
        { type: 'sweepParties', params: ({ event }) => ({ before: event.before }) },
        { type: 'saveState', params: NO_ACK },
      ],
    },
    'agent.tied': {
      actions: [
        { type: 'tieParties', params: ({ event }) => ({ parties: event.parties, by: event.by }) },
        { type: 'saveState', params: NO_ACK },
      ],
    },
    // The gate follows the unclaimed change, which an ack can clear while others still owe theirs.
    'replan.ack': [
      {
        guard: { type: 'isAcceptable', params: ({ event }) => ({ ack: event }) },
        actions: [
          { type: 'acceptAck', params: ({ event }) => ({ ack: event }) },
          {
            type: 'saveState',
            params: ({ context, event }) => ({ answers: decisions.ackToAnswer(context, event) }),
          },
          'notifyGate',
        ],
      },
      { actions: { type: 'reply', params: ({ context, event }) => decisions.ackRejected(context, event) } },
    ],
  },
  initial: 'loading',
  states: {
    loading: {
      description: 'Waiting for the event log to load events.jsonl and state.json.',
      on: {
        'replan.restored': { target: 'idle', actions: { type: 'restore', params: ({ event }) => event } },
      },
    },
    idle: {
      entry: 'notifyGate',
      description: 'No guidance or constraints change has been logged since the log began.',
      always: [
        { guard: 'someoneOwes', target: 'pending' },
        { guard: 'everAcknowledged', target: 'acknowledged' },
      ],
    },
    pending: {
      entry: 'notifyGate',
      description:
        "The user changed guidance or constraints: each agent's plan is on hold until that agent acknowledges the latest such event; an agent that comes meanwhile owes it too, until one has acknowledged it.",
      // Only an ack clears what a newcomer owes, so nothing leads back to idle.
      always: { guard: not('someoneOwes'), target: 'acknowledged' },
    },
    acknowledged: {
      entry: 'notifyGate',
      description: 'Every agent working replanned for the latest guidance or constraints event.',
      always: { guard: 'someoneOwes', target: 'pending' },
    },
  },
});
