import type { ClientInfo, PartyKey } from './agent-identity.js';
import { type PlanSnapshot, planChange } from './plan-diff.js';

/**
 * One accepted ack with the replan it carries: who acknowledged which change when, and what became
 * of plan.md from when that agent began to owe the change to the ack. One shape in memory, in
 * state.json (our `acks` key, which PulseAgent ignores) and in `/status`.
 */
export interface ReplanAck {
  /** The agent's id at the ack (the key of the party pulse heard first). */
  agent: string;
  /** Its parties then: MCP session, name, hook sessions. */
  parties: PartyKey[];
  /** What its client said it is (MCP `clientInfo`), when it said so. */
  client?: ClientInfo;
  /** The event acknowledged: the latest guidance or constraints change the agent owed. */
  event_id: string;
  /** The files it owed a replan for. */
  files: string[];
  at: string;
  /** When it began to owe (ISO), or null when pulse did not know. */
  owed_since: string | null;
  plan_before_sha256: string | null;
  plan_after_sha256: string | null;
  plan_changed: boolean;
  added: number;
  removed: number;
  /** In words: "acknowledged without changing the plan", or what changed. */
  summary: string;
  /** The unified diff of plan.md, bounded; null when unchanged or not comparable by text. */
  diff: string | null;
}

/** Acks kept, in memory and in state.json; the oldest go first. */
export const ACK_HISTORY = 20;

/**
 * The ack of one agent, with what became of its plan from `before` to `after`. plan.md is one
 * file for every agent: when another agent's ack of the same change left it as it is now, the
 * summary says so, so an ack that only took another's replan reads as such.
 */
export const replanAck = ({
  agent,
  parties,
  client = null,
  eventId,
  files,
  at,
  owingSince,
  before,
  after,
  history,
}: {
  agent: string;
  parties: PartyKey[];
  client?: ClientInfo | null;
  eventId: string;
  files: string[];
  at: string;
  owingSince: number | null;
  before: PlanSnapshot;
  after: PlanSnapshot;
  /** The acks so far, to find another's ack of the same change. */
  history: readonly ReplanAck[];
}): ReplanAck => {
  const change = planChange(before, after);
  const previous = history.findLast((ack) => ack.event_id === eventId);
  const taken = change.changed && after.sha256 !== null && previous?.plan_after_sha256 === after.sha256;
  return {
    agent,
    parties,
    ...(client === null ? {} : { client }),
    event_id: eventId,
    files,
    at,
    owed_since: owingSince === null ? null : new Date(owingSince).toISOString(),
    plan_before_sha256: before.sha256,
    plan_after_sha256: after.sha256,
    plan_changed: change.changed,
    added: change.added,
    removed: change.removed,
    summary: taken ? `${change.summary}; no edit since the previous ack of this change` : change.summary,
    diff: change.diff,
  };
};

/** The history with `ack` added, the oldest dropped past `ACK_HISTORY`. */
export const withAck = (acks: readonly ReplanAck[], ack: ReplanAck): ReplanAck[] =>
  [...acks, ack].slice(-ACK_HISTORY);
