import { type ClientInfo, ONE_SHOT, type PartyKey } from './agent-identity.js';
import type { PendingReplan } from './event-index.js';
import { type PlanSnapshot, UNKNOWN_PLAN } from './plan-diff.js';
import { isInvalidating, type PulseEvent } from './pulse-files.js';
import { replanAck, withAck } from './replan-acks.js';
import {
  acknowledge,
  agentIdOf,
  clientOf,
  hear,
  leave,
  owe,
  owedByAnyone,
  restoredAgents,
  sweep,
  type TieWay,
  tie,
} from './replan-agents.js';
import type { AckEvent, AckRejection, AckToAnswer, ReplanContext, Restored } from './replan-context.js';
import { answerOf, askingOf, type ReplyOut } from './reply.js';

/*
 * What each of the replan lifecycle's decisions does, as pure functions of its context: its named
 * actions apply them, so each can be read, tested and swapped on its own.
 */

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

/** What the event log restored: PulseAgent's pending replan, the agents and acks state.json kept, and plan.md. */
export const restored = (event: Restored): Partial<ReplanContext> => {
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
};

/** Whether any of the events appended is a guidance or constraints change. */
export const hasInvalidating = (events: readonly PulseEvent[]): boolean =>
  events.some((e) => isInvalidating(e));

/**
 * Guidance or constraints changed: every agent working owes the latest such event (from the plan
 * as it is now), and so does a newcomer until one agent has acknowledged it.
 */
export const invalidated = (
  context: ReplanContext,
  events: readonly PulseEvent[],
  plan: PlanSnapshot | undefined,
): Partial<ReplanContext> => {
  const unclaimed = withInvalidating(context.unclaimed, events);
  const changed = withInvalidating(NOTHING_PENDING, events);
  const now = plan ?? context.plan;
  const first = events.find((e) => isInvalidating(e))!;
  const changedAt = Date.parse(first.timestamp);
  const start = { plan: now, at: Number.isNaN(changedAt) ? null : changedAt };
  const agents = owe(context.agents, changed.pendingEventId!, changed.pendingFiles, start);
  return {
    ...withPending({ unclaimed, agents }),
    plan: now,
    unclaimedBase: context.unclaimed.pendingEventId === null ? now : context.unclaimedBase,
  };
};

/** Pulse heard from a party: a new one becomes an agent that owes what a newcomer owes. */
export const heard = (
  context: ReplanContext,
  party: { party: PartyKey; at: number; closes: boolean; client?: ClientInfo },
): Partial<ReplanContext> =>
  withPending({
    unclaimed: context.unclaimed,
    agents: hear(context.agents, party, newcomerOwes(context), context.unclaimedBase ?? context.plan),
  });

/** A party left: it owes nothing any more. */
export const left = (context: ReplanContext, party: PartyKey): Partial<ReplanContext> =>
  withPending({ unclaimed: context.unclaimed, agents: leave(context.agents, party) });

/** The agents not heard from since `before` are no longer waited for. */
export const swept = (context: ReplanContext, before: number): Partial<ReplanContext> =>
  withPending({ unclaimed: context.unclaimed, agents: sweep(context.agents, before) });

/** Two parties turned out to be one agent. */
export const tied = (
  context: ReplanContext,
  [a, b]: [PartyKey, PartyKey],
  by: TieWay,
): Partial<ReplanContext> =>
  withPending({ unclaimed: context.unclaimed, agents: tie(context.agents, a, b, by) });

/** The answer to an ack that cannot be taken: why, with its code. */
export const ackRejected = (context: ReplanContext, ack: AckEvent): ReplyOut => {
  const code = replanAckRejection(context, ack) ?? 'stale_event';
  const owed = owedBy(context, ack.agent ?? ONE_SHOT);
  return answerOf(ack, {
    accepted: false,
    acknowledged_event_id: context.lastAck?.eventId ?? null,
    plan_sha256: context.lastAck?.planSha256 ?? null,
    reason: rejectionReason(code, ack.eventId, owed?.pendingEventId ?? null),
    code,
  });
};

/**
 * An accepted ack: the agent that makes it owes nothing more, nor does a newcomer; the ack is
 * recorded with what became of the plan since that agent began to owe the change.
 */
export const ackAccepted = (context: ReplanContext, event: AckEvent): Partial<ReplanContext> => {
  const party = event.agent ?? ONE_SHOT;
  const id = agentIdOf(context.agents, party);
  const agent = id === undefined ? undefined : context.agents[id];
  const plan = event.plan ?? { sha256: event.planSha256, text: null, size: null };
  const ack = replanAck({
    agent: id ?? party,
    parties: agent ? Object.keys(agent.parties) : [party],
    client: agent ? clientOf(agent) : null,
    eventId: event.eventId,
    files: (agent?.owes ?? owedBy(context, party))?.pendingFiles ?? [],
    at: event.at,
    owingSince: agent?.owingSince ?? null,
    before: agent?.planBase ?? context.unclaimedBase ?? context.plan,
    after: plan,
    history: context.acks,
  });
  return {
    ...withPending({ unclaimed: NOTHING_PENDING, agents: acknowledge(context.agents, party, event.at) }),
    plan,
    unclaimedBase: null,
    acks: withAck(context.acks, ack),
    lastAck: { eventId: event.eventId, planSha256: event.planSha256, at: event.at },
  };
};

/**
 * The answer to an ack just accepted (`context` has it as the last of its acks), for the event
 * log to send once the write to state.json has ended.
 */
export const ackToAnswer = (context: ReplanContext, event: AckEvent): AckToAnswer => {
  const ack = context.acks.at(-1);
  return {
    asking: askingOf(event),
    reply: {
      accepted: true,
      acknowledged_event_id: event.eventId,
      plan_sha256: event.planSha256,
      reason: ACK_ACCEPTED_REASON,
      ...(ack === undefined ? {} : { plan_changed: ack.plan_changed, plan_change: ack.summary }),
    },
  };
};

/** Whether the gate must hold: no agent has acknowledged the latest change yet, or pulse is blind. */
export const gateHolds = (context: Pick<ReplanContext, 'unclaimed' | 'blind'>): boolean =>
  context.unclaimed.pendingEventId !== null || context.blind.length > 0;
