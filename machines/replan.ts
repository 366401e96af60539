import { assign, type EventObject, enqueueActions, fromCallback, not, sendTo, setup } from 'xstate';
import type { PendingReplan } from './event-index.js';
import type { FileFault } from './log-faults.js';
import { type PlanSnapshot, UNKNOWN_PLAN } from './plan-diff.js';
import { type AckRecord, isInvalidating, type PulseEvent } from './pulse-files.js';
import { type ReplanAck, replanAck, withAck } from './replan-acks.js';
import {
  type AgentBook,
  agentIdOf,
  hear,
  leave,
  owe,
  owedByAnyone,
  type PartyKey,
  restoredAgents,
  type SavedAgent,
  savedAgents,
  settle,
  sweep,
  sweeps,
  type TieWay,
  tie,
} from './replan-agents.js';

/** Why an ack was refused: a stable code beside PulseAgent's sentence. */
export type AckRejection =
  | 'missing_event_id'
  | 'unknown_event'
  | 'not_invalidating'
  | 'no_pending_replan'
  | 'stale_event';

/** The answer to one `replan.ack`, as `pulse_ack_replan` returns it. */
export interface AckReply {
  requestId: number;
  accepted: boolean;
  acknowledged_event_id: string | null;
  plan_sha256: string | null;
  reason: string;
  code?: AckRejection;
  /** With an accepted ack: whether plan.md changed since this agent began to owe the change. */
  plan_changed?: boolean;
  /** With an accepted ack: what became of the plan, in words ("acknowledged without changing the plan", …). */
  plan_change?: string;
}

export interface ReplanContext extends PendingReplan {
  /**
   * PulseAgent's pending replan: the guidance and constraints events after the last accepted ack,
   * whoever made it. An agent pulse has not heard from yet owes it, or what another agent owes.
   */
  unclaimed: PendingReplan;
  /** The agents working in the project, each with the change it still owes (`pendingEventId` is the latest any owes). */
  agents: AgentBook;
  lastAck: AckRecord | null;
  lastReply: AckReply | null;
  /** What may hide a guidance or constraints change from the log now (the log owner says): the plan is on hold while any. */
  blind: FileFault[];
  /** The plan as the log last told (at a change, an ack, the load). */
  plan: PlanSnapshot;
  /** The plan when the first change no one has acknowledged yet was logged: a newcomer's ack is diffed against it. */
  unclaimedBase: PlanSnapshot | null;
  /** The latest accepted acks, each with its replan (what became of the plan), oldest first. */
  acks: ReplanAck[];
}

export type ReplanEvent =
  | {
      type: 'replan.restored';
      pending: PendingReplan;
      lastAck: AckRecord | null;
      /** The agents state.json kept, and when they were loaded. */
      agents?: SavedAgent[];
      at?: number;
      /** plan.md as loaded. */
      plan?: PlanSnapshot;
      /** The acks state.json kept. */
      acks?: ReplanAck[];
    }
  | {
      type: 'log.appended';
      events: PulseEvent[];
      /** plan.md as the scan that logged the events found it. */
      plan?: PlanSnapshot;
    }
  | { type: 'log.faults'; blind: FileFault[] }
  | {
      type: 'replan.ack';
      requestId: number;
      eventId: string;
      /** The event the id names, looked up in the log; null when the log has no such id. */
      target: Pick<PulseEvent, 'id' | 'path'> | null;
      planSha256: string | null;
      /** plan.md at the ack (its hash is `planSha256`). */
      plan?: PlanSnapshot;
      at: string;
      /** Who acknowledges; an agent that never called before counts as `one-shot`. */
      agent?: PartyKey;
    }
  | { type: 'agent.heard'; party: PartyKey; at: number; closes: boolean }
  | { type: 'agent.left'; party: PartyKey }
  | { type: 'agent.tied'; parties: [PartyKey, PartyKey]; by: TieWay }
  | { type: 'agents.sweep'; before: number };

/** Told to the log owner to make the ack and the agents durable in state.json. */
export interface ReplanRecord {
  type: 'replan.record';
  ack: AckRecord | null;
  agents: SavedAgent[];
  acks: ReplanAck[];
  /** The ack's request, for its caller to wait on; 0 when only the agents changed. */
  requestId: number;
}

type AckEvent = Extract<ReplanEvent, { type: 'replan.ack' }>;

export const ACK_ACCEPTED_REASON = 'Replan acknowledged for the latest guidance or constraints event.';

const rejectionReason = (code: AckRejection, eventId: string, pendingEventId: string | null): string => {
  switch (code) {
    case 'missing_event_id':
      return 'A pending replan event id is required.';
    case 'unknown_event':
      return `Event ${eventId} was not found.`;
    case 'not_invalidating':
      return `Event ${eventId} is not a guidance or constraints event.`;
    case 'no_pending_replan':
      return 'There is no pending guidance or constraints change to acknowledge.';
    case 'stale_event':
      return `Event ${eventId} is stale. Acknowledge the latest pending replan event ${pendingEventId} instead.`;
  }
};

/** The party a caller that names no agent and has no MCP session is: PulseAgent's one client. */
export const ONE_SHOT: PartyKey = 'one-shot';

const NOTHING_PENDING: PendingReplan = { pendingEventId: null, pendingFiles: [] };

/** PulseAgent's pending replan together with what agents owe: the latest event, every file. */
const withUnclaimed = (unclaimed: PendingReplan, owed: PendingReplan | null): PendingReplan | null => {
  if (unclaimed.pendingEventId === null) return owed;
  if (owed === null) return unclaimed;
  return {
    pendingEventId: unclaimed.pendingEventId,
    pendingFiles: [...new Set([...unclaimed.pendingFiles, ...owed.pendingFiles])],
  };
};

/**
 * What an agent pulse has not heard from yet owes: PulseAgent's pending replan (no agent has
 * acknowledged the change), and what an agent a restart took over still owes, since the newcomer
 * may be that agent reconnected; null when none.
 */
const newcomerOwes = ({
  unclaimed,
  agents,
}: Pick<ReplanContext, 'unclaimed' | 'agents'>): PendingReplan | null =>
  withUnclaimed(unclaimed, owedByAnyone(agents, { restored: true }));

/** The change this caller still owes an ack: its own, or a newcomer's when pulse has not heard from it; null when none. */
export const owedBy = (
  context: Pick<ReplanContext, 'unclaimed' | 'agents'>,
  party: PartyKey,
): PendingReplan | null => {
  const id = agentIdOf(context.agents, party);
  return id === undefined ? newcomerOwes(context) : context.agents[id]!.owes;
};

/** The context with `pendingEventId` and `pendingFiles` brought up to date: what any agent, or a newcomer, owes. */
const withPending = <C extends Pick<ReplanContext, 'unclaimed' | 'agents'>>(
  context: C,
): C & PendingReplan => ({
  ...context,
  ...(withUnclaimed(context.unclaimed, owedByAnyone(context.agents)) ?? NOTHING_PENDING),
});

/**
 * Whether some agent must stop and replan: one owes a guidance or constraints change, or pulse
 * cannot see or record such changes now (fail closed). What one caller owes is `owedBy`'s.
 */
export const needsReplan = (context: Pick<ReplanContext, 'pendingEventId' | 'blind'>): boolean =>
  context.pendingEventId !== null || context.blind.length > 0;

/** The first check of PulseAgent's order that refuses this ack (for the agent that makes it), or null when it is accepted. */
export const replanAckRejection = (
  context: Pick<ReplanContext, 'unclaimed' | 'agents'>,
  event: AckEvent,
): AckRejection | null => {
  if (event.eventId.trim() === '') return 'missing_event_id';
  if (event.target === null) return 'unknown_event';
  if (!isInvalidating(event.target)) return 'not_invalidating';
  const owed = owedBy(context, event.agent ?? ONE_SHOT);
  if (owed === null) return 'no_pending_replan';
  if (event.target.id !== owed.pendingEventId) return 'stale_event';
  return null;
};

const withInvalidating = (context: PendingReplan, events: readonly PulseEvent[]): PendingReplan => {
  const pendingFiles = [...context.pendingFiles];
  let pendingEventId = context.pendingEventId;
  for (const event of events) {
    if (!isInvalidating(event)) continue;
    pendingEventId = event.id;
    if (!pendingFiles.includes(event.path)) pendingFiles.push(event.path);
  }
  return { pendingEventId, pendingFiles };
};

/**
 * The replan lifecycle: idle → pending → acknowledged, and back to pending on every new
 * guidance or constraints event. Every agent working when the change comes owes it an ack of its
 * own, so the lifecycle is pending while any agent (or a newcomer) still owes it. Decisions only;
 * the log owner makes the ack and the agents durable.
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
    hasInvalidating: ({ event }) =>
      event.type === 'log.appended' && event.events.some((e) => isInvalidating(e)),
    someoneOwes: ({ context }) => context.pendingEventId !== null,
    everAcknowledged: ({ context }) => context.lastAck !== null,
    isAcceptable: ({ context, event }) =>
      event.type === 'replan.ack' && replanAckRejection(context, event) === null,
    isNewParty: ({ context }, { party }: { party: PartyKey }) =>
      agentIdOf(context.agents, party) === undefined,
    isKnownParty: ({ context }, { party }: { party: PartyKey }) =>
      agentIdOf(context.agents, party) !== undefined,
    sweepDrops: ({ context }, { before }: { before: number }) => sweeps(context.agents, before),
  },
  actions: {
    restore: assign(({ event }) => {
      if (event.type !== 'replan.restored') return {};
      const plan = event.plan ?? UNKNOWN_PLAN;
      return {
        ...withPending({
          unclaimed: event.pending,
          agents: restoredAgents(event.agents ?? [], { plan, at: event.at ?? 0 }, event.pending),
          lastAck: event.lastAck,
        }),
        plan,
        unclaimedBase: event.pending.pendingEventId === null ? null : plan,
        acks: event.acks ?? [],
      };
    }),
    recordInvalidation: assign(({ context, event }) => {
      if (event.type !== 'log.appended') return {};
      const unclaimed = withInvalidating(context.unclaimed, event.events);
      const changed = withInvalidating(NOTHING_PENDING, event.events);
      const plan = event.plan ?? context.plan;
      const first = event.events.find((e) => isInvalidating(e))!;
      const changedAt = Date.parse(first.timestamp);
      const start = { plan, at: Number.isNaN(changedAt) ? null : changedAt };
      const agents = owe(context.agents, changed.pendingEventId!, changed.pendingFiles, start);
      return {
        ...withPending({ unclaimed, agents }),
        plan,
        unclaimedBase: context.unclaimed.pendingEventId === null ? plan : context.unclaimedBase,
      };
    }),
    recordBlind: assign(({ event }) => (event.type === 'log.faults' ? { blind: event.blind } : {})),
    hearParty: assign(({ context }, heard: { party: PartyKey; at: number; closes: boolean }) =>
      withPending({
        unclaimed: context.unclaimed,
        agents: hear(context.agents, heard, newcomerOwes(context), context.unclaimedBase ?? context.plan),
      }),
    ),
    dropParty: assign(({ context }, { party }: { party: PartyKey }) =>
      withPending({ unclaimed: context.unclaimed, agents: leave(context.agents, party) }),
    ),
    sweepParties: assign(({ context }, { before }: { before: number }) =>
      withPending({ unclaimed: context.unclaimed, agents: sweep(context.agents, before) }),
    ),
    tieParties: assign(({ context }, { parties, by }: { parties: [PartyKey, PartyKey]; by: TieWay }) =>
      withPending({ unclaimed: context.unclaimed, agents: tie(context.agents, parties[0], parties[1], by) }),
    ),
    rejectAck: assign(({ context, event }) => {
      if (event.type !== 'replan.ack') return {};
      const code = replanAckRejection(context, event) ?? 'stale_event';
      const owed = owedBy(context, event.agent ?? ONE_SHOT);
      return {
        lastReply: {
          requestId: event.requestId,
          accepted: false,
          acknowledged_event_id: context.lastAck?.eventId ?? null,
          plan_sha256: context.lastAck?.planSha256 ?? null,
          reason: rejectionReason(code, event.eventId, owed?.pendingEventId ?? null),
          code,
        },
      };
    }),
    acceptAck: assign(({ context, event }) => {
      if (event.type !== 'replan.ack') return {};
      const party = event.agent ?? ONE_SHOT;
      const id = agentIdOf(context.agents, party);
      const agent = id === undefined ? undefined : context.agents[id];
      const plan = event.plan ?? { sha256: event.planSha256, text: null, size: null };
      const ack = replanAck({
        agent: id ?? party,
        parties: agent ? Object.keys(agent.parties) : [party],
        eventId: event.eventId,
        files: (agent?.owes ?? owedBy(context, party))?.pendingFiles ?? [],
        at: event.at,
        owingSince: agent?.owingSince ?? null,
        before: agent?.planBase ?? context.unclaimedBase ?? context.plan,
        after: plan,
        history: context.acks,
      });
      return {
        ...withPending({ unclaimed: NOTHING_PENDING, agents: settle(context.agents, party, event.at) }),
        plan,
        unclaimedBase: null,
        acks: withAck(context.acks, ack),
        lastAck: { eventId: event.eventId, planSha256: event.planSha256, at: event.at },
        lastReply: {
          requestId: event.requestId,
          accepted: true,
          acknowledged_event_id: event.eventId,
          plan_sha256: event.planSha256,
          reason: ACK_ACCEPTED_REASON,
          plan_changed: ack.plan_changed,
          plan_change: ack.summary,
        },
      };
    }),
    /**
     * Tells the reflection gate (when the system has one) whether no agent has replanned yet (or
     * pulse is blind); an agent that still owes its own ack is refused deliveries at its check-in.
     */
    notifyGate: enqueueActions(({ context, enqueue, system }) => {
      const gate = system.get('gate');
      if (gate !== undefined) {
        const pending = context.unclaimed.pendingEventId !== null || context.blind.length > 0;
        const status = { type: 'replan.status', pending } as const;
        enqueue.sendTo(gate, status);
      }
    }),
    /** Asks the log owner to write the last ack and the agents to state.json. */
    saveState: sendTo(
      ({ system }) => system.get('log'),
      ({ context, event }): ReplanRecord => ({
        type: 'replan.record',
        ack: context.lastAck,
        agents: savedAgents(context.agents),
        acks: context.acks,
        requestId: event.type === 'replan.ack' ? event.requestId : 0,
      }),
    ),
  },
}).createMachine({
  id: 'replan',
  context: {
    pendingEventId: null,
    pendingFiles: [],
    unclaimed: NOTHING_PENDING,
    agents: {},
    lastAck: null,
    lastReply: null,
    blind: [],
    plan: UNKNOWN_PLAN,
    unclaimedBase: null,
    acks: [],
  },
  invoke: { src: 'agentClock' },
  // Every step only records; each state's eventless transitions then follow who still owes.
  on: {
    // Orthogonal to the lifecycle: acks are judged as ever, and the answers say the plan is on hold.
    'log.faults': { actions: ['recordBlind', 'notifyGate'] },
    // Not saved: on restart every agent owes what the log holds after the last ack.
    'log.appended': { guard: 'hasInvalidating', actions: ['recordInvalidation', 'notifyGate'] },
    'agent.heard': [
      {
        guard: { type: 'isNewParty', params: ({ event }) => ({ party: event.party }) },
        actions: [{ type: 'hearParty', params: ({ event }) => event }, 'saveState'],
      },
      { actions: { type: 'hearParty', params: ({ event }) => event } },
    ],
    'agent.left': {
      guard: { type: 'isKnownParty', params: ({ event }) => ({ party: event.party }) },
      actions: [{ type: 'dropParty', params: ({ event }) => ({ party: event.party }) }, 'saveState'],
    },
    'agents.sweep': {
      guard: { type: 'sweepDrops', params: ({ event }) => ({ before: event.before }) },
      actions: [{ type: 'sweepParties', params: ({ event }) => ({ before: event.before }) }, 'saveState'],
    },
    'agent.tied': {
      actions: [
        { type: 'tieParties', params: ({ event }) => ({ parties: event.parties, by: event.by }) },
        'saveState',
      ],
    },
    // The gate follows the unclaimed change, which an ack can clear while others still owe theirs.
    'replan.ack': [
      { guard: 'isAcceptable', actions: ['acceptAck', 'saveState', 'notifyGate'] },
      { actions: 'rejectAck' },
    ],
  },
  initial: 'loading',
  states: {
    loading: {
      description: 'Waiting for the log owner to load events.jsonl and state.json.',
      on: { 'replan.restored': { target: 'idle', actions: 'restore' } },
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
