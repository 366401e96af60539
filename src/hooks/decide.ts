import type { HookSessionMemory } from '../../machines/hook-sessions-context.js';
import type { FileFault } from '../../machines/log-faults.js';
import type { Verdict } from './dialect.js';
import type { HookCall } from './hook-input.js';
import {
  type Attention,
  attentionNotice,
  blindHeldReason,
  blindNotice,
  blindStopReason,
  heldReason,
  type Pending,
  pendingNotice,
  stillBlindNotice,
  stillPendingNotice,
  stopReason,
} from './messages.js';

/** What the daemon knows when a hook asks: the replan, the delivery, this session's memory, the tool. */
export interface HookFacts {
  pending: Pending | null;
  /** What hides guidance or constraints changes from pulse now: while any, the hooks hold as for a pending replan. */
  blind: readonly FileFault[];
  /** The scan did not end within the hook's budget: what was read may miss the last moments, so it counts as blind too. */
  late?: FileFault | undefined;
  /** The delivery out or set aside for the agents, if any. */
  delivery: Attention | null;
  memory: HookSessionMemory;
  /** The call is one of pulse's own tools (the agent has just checked in). */
  pulseTool: boolean;
  /** The call is what the agent needs to replan (reading, the plan, pulse's tools): it runs while a replan is pending. */
  toolAllowed: boolean;
  /** For a shell command that is more than reading: what. */
  toolWhy?: string | undefined;
}

/** A verdict, and what the session has been told by it. */
export interface Decision {
  verdict: Verdict;
  remember: Partial<HookSessionMemory>;
}

const joined = (...parts: Array<string | null>): string | undefined => {
  const text = parts.filter((part) => part !== null).join('\n\n');
  return text === '' ? undefined : text;
};

/**
 * Whether this hook's answer can carry news to the agent: Claude's and Codex's context events (not
 * right after pulse's own tools: the agent has just checked in, and knows); for Cursor only a stop
 * (a follow-up message).
 */
const canAnnounce = ({ agent, phase }: HookCall, { pulseTool }: HookFacts): boolean => {
  if (agent === 'cursor') return phase === 'stop';
  if (phase === 'post-tool') return !pulseTool;
  return phase === 'session-start' || phase === 'prompt';
};

/**
 * What the hooks hold for, and a key to say it once per session: a blind spot first, else the
 * pending event. A late scan alone keys as the pending event it read, so one slow hook on a busy
 * machine neither holds a stop twice for that event nor changes the key the next hook sees.
 */
const holdOf = ({ pending, blind: faults, late }: HookFacts) => {
  const blind = late === undefined ? faults : [...faults, late];
  if (blind.length > 0) {
    return {
      key:
        faults.length === 0 && pending !== null
          ? pending.event_id
          : `unobservable:${blind.map((fault) => fault.file).join(',')}`,
      held: (tool: NonNullable<HookCall['tool']>, why?: string) => blindHeldReason(blind, pending, tool, why),
      stop: () => blindStopReason(blind, pending),
      notice: () => blindNotice(blind, pending),
      still: () =>
        faults.length === 0 && pending !== null ? stillPendingNotice(pending) : stillBlindNotice(blind),
    };
  }
  if (pending === null) return null;
  return {
    key: pending.event_id,
    held: (tool: NonNullable<HookCall['tool']>, why?: string) => heldReason(pending, tool, why),
    stop: () => stopReason(pending),
    notice: () => pendingNotice(pending),
    still: () => stillPendingNotice(pending),
  };
};

/**
 * The decision for one hook call. A pending replan, or a guidance file pulse cannot see (fail
 * closed), holds every tool call the agent does not need to replan, and holds a stop once per
 * pending event or blind spot: the same one never holds two stops in a row, so a stop hook cannot
 * loop, and the user is told it is still there. It and a delivery are told as context once per
 * session. A subagent's tool calls are held as its parent's; nothing else of it is answered.
 */
export const decide = (call: HookCall, facts: HookFacts): Decision => {
  // A subagent cannot acknowledge, and its stop or prompt is not its parent's: only its tool calls are held.
  if (call.subagent === true && call.phase !== 'pre-tool') return { verdict: {}, remember: {} };
  const { delivery, memory } = facts;
  const hold = holdOf(facts);
  const news = delivery !== null && canAnnounce(call, facts) && memory.toldDelivery !== delivery.delivery_id;
  const told = news ? { toldDelivery: delivery.delivery_id } : {};
  const attention = news ? attentionNotice(delivery) : null;
  switch (call.phase) {
    case 'pre-tool':
      return {
        verdict: hold !== null && !facts.toolAllowed ? { hold: hold.held(call.tool!, facts.toolWhy) } : {},
        remember: {},
      };
    case 'stop':
      if (hold === null) return { verdict: { hold: joined(attention) }, remember: told };
      if (memory.stopHeldFor === hold.key) return { verdict: { notice: hold.still() }, remember: {} };
      // The reason told the session: Gemini and pulse's opencode plugin send it back as the next prompt, which must not tell it again.
      return { verdict: { hold: hold.stop() }, remember: { stopHeldFor: hold.key, toldPending: hold.key } };
    case 'post-tool':
      // The next tool call is held anyway; saying it after every read would only repeat it.
      return { verdict: { context: joined(attention) }, remember: told };
    default: {
      const tell = hold !== null && memory.toldPending !== hold.key;
      return {
        verdict: { context: joined(tell ? hold.notice() : null, attention) },
        remember: { ...told, ...(tell ? { toldPending: hold.key } : {}) },
      };
    }
  }
};
