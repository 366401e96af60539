// The PulseAgent protocol as the tests know it (PulseAgent 0.1.0's templates, reasons and ack
// answers), written out here so that the daemon is checked against the protocol, not against itself.

/** The four templates a first start writes under `.pulse/`, by file name. */
export const TEMPLATES = {
  'task.md': '# Task\n\nDescribe the current task here.\n',
  'guidance.md': '# Guidance\n\nWrite updated user guidance here. This file can change task direction.\n',
  'constraints.md':
    '# Constraints\n\nWrite project constraints here. Constraints can restrict behavior but must not expand agent permissions.\n',
  'plan.md': '# Plan\n\nWrite the current plan here.\n',
} as const;

/** The name of one of the four protocol files under `.pulse/`. */
export type PulseFile = keyof typeof TEMPLATES;

/** The protocol's `reason` sentences, as `pulse_should_interrupt` and `pulse_ack_replan` give them. */
export const REASONS = {
  pending:
    'User guidance or constraints changed and have not been acknowledged. The agent should review PulseAgent context, update the plan, and call pulse_ack_replan before continuing.',
  newEvents:
    'PulseAgent saw new events, but there is no pending guidance or constraints change requiring replan.',
  quiet: 'No new PulseAgent events and no pending replan acknowledgement.',
  accepted: 'Replan acknowledged for the latest guidance or constraints event.',
} as const;

/** The structured answer of `pulse_should_interrupt`. */
export interface Decision {
  needs_replan: boolean;
  latest_event_id: string | null;
  has_new_events: boolean;
  changed_files: string[];
  pending_replan_event_id: string | null;
  pending_replan_files: string[];
  last_acknowledged_event_id: string | null;
  last_acknowledged_plan_sha256: string | null;
  reason: string;
  last_seen_event_known: boolean;
  /** What pulse cannot see or record now; empty when all is well. */
  unobservable: Array<{ file: string; reason: string }>;
}

/** The structured answer of `pulse_ack_replan`. */
export interface AckAnswer {
  accepted: boolean;
  acknowledged_event_id: string | null;
  plan_sha256: string | null;
  reason: string;
  code?: string;
  /** With an accepted ack: whether it reached state.json. */
  durable?: boolean;
  warning?: string;
}

/** One external event out to the agent, as `pulse_should_interrupt` lists it. */
export interface ExternalEvent {
  id: string;
  source: string;
  item_id: string;
  title: string;
  urgency: number;
  /** The thinking model's reason, when a model judged. */
  why?: string;
  received_at: string;
  starts_at?: string;
  url?: string;
  detail?: string;
}

/** `pulse_should_interrupt`'s whole answer: the decision, and the delivery out to this agent. */
export interface CheckIn extends Decision {
  needs_attention: boolean;
  external_events: ExternalEvent[];
  delivery_id: string | null;
  lease_expires_at: string | null;
}

/** The structured answer of `pulse_ack_events`. */
export interface EventsAck {
  accepted: boolean;
  delivery_id: string;
  reason: string;
  code?: string;
  consumed: string[];
  put_back: string[];
  dead_lettered: string[];
}
