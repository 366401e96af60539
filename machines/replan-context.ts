import type { ClientInfo, PartyKey } from './agent-identity.js';
import type { PendingReplan } from './event-index.js';
import type { FileFault } from './log-faults.js';
import { type PlanSnapshot, UNKNOWN_PLAN } from './plan-diff.js';
import type { AckRecord, PulseEvent } from './pulse-files.js';
import type { ReplanAck } from './replan-acks.js';
import type { AgentBook, SavedAgent, TieWay } from './replan-agents.js';
import type { Asking } from './reply.js';

/** Why an ack was refused: a stable code beside PulseAgent's sentence. */
export type AckRejection =
  | 'missing_event_id'
  | 'unknown_event'
  | 'not_invalidating'
  | 'no_pending_replan'
  | 'stale_event';

/** The lifecycle's answer to one `replan.ack`. */
export interface AckReply {
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

/** An ack's answer, as `pulse_ack_replan` returns it: an accepted one once its write to state.json ended. */
export type AckAnswer = AckReply & {
  /** True once the accepted ack is in state.json; false while it lives in memory only (a full disk). */
  durable?: boolean;
  /** Why it is not durable yet, and what pulse does about it. */
  warning?: string;
};

/** An accepted ack waiting for its write: who asked, and the lifecycle's answer. */
export interface AckToAnswer {
  asking: Asking<AckAnswer>;
  reply: AckReply;
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
  /** What may hide a guidance or constraints change from the log now (the event log says): the plan is on hold while any. */
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
  | ({
      type: 'replan.ack';
      eventId: string;
      /** The event the id names, looked up in the log; null when the log has no such id. */
      target: Pick<PulseEvent, 'id' | 'path'> | null;
      planSha256: string | null;
      /** plan.md at the ack (its hash is `planSha256`). */
      plan?: PlanSnapshot;
      at: string;
      /** Who acknowledges; an agent that never called before counts as `one-shot`. */
      agent?: PartyKey;
    } & Asking<AckAnswer>)
  | { type: 'agent.heard'; party: PartyKey; at: number; closes: boolean; client?: ClientInfo }
  | { type: 'agent.left'; party: PartyKey }
  | { type: 'agent.tied'; parties: [PartyKey, PartyKey]; by: TieWay }
  | { type: 'agents.sweep'; before: number };

/** Told to the event log to make the ack and the agents durable in state.json. */
export interface ReplanRecord {
  type: 'replan.record';
  ack: AckRecord | null;
  agents: SavedAgent[];
  acks: ReplanAck[];
  /** The accepted ack this write answers once it ends; null when only the agents changed. */
  answers: AckToAnswer | null;
}

/** What the event log restored, as the lifecycle receives it. */
export type Restored = Omit<Extract<ReplanEvent, { type: 'replan.restored' }>, 'type'>;

/** An agent's ack, as the lifecycle receives it. */
export type AckEvent = Extract<ReplanEvent, { type: 'replan.ack' }>;

/** The lifecycle's context at start: nothing pending, no agent heard, the plan unknown. */
export const INITIAL_REPLAN_CONTEXT: ReplanContext = {
  pendingEventId: null,
  pendingFiles: [],
  unclaimed: { pendingEventId: null, pendingFiles: [] },
  agents: {},
  lastAck: null,
  blind: [],
  plan: UNKNOWN_PLAN,
  unclaimedBase: null,
  acks: [],
};
