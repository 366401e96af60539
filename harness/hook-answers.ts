import type { HookAgent } from '../src/hooks/events.js';

const parse = (text: string): Record<string, unknown> | null => {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

/**
 * Whether an answer, in `agent`'s format, holds the call and names the pending event `eventId`:
 * Claude Code, Codex and VS Code `permissionDecision: "deny"` in `hookSpecificOutput`, Copilot at the
 * top, Cursor `permission: "deny"`, Gemini CLI `decision: "deny"`, pulse's opencode plugin `hold`
 * (which it throws). A fail-open
 * "change nothing" (the daemon not reached, another project's daemon) does not.
 */
export const holdsCall = (agent: HookAgent, answer: string, eventId: string): boolean => {
  const json = parse(answer);
  if (json === null) return false;
  if (agent === 'cursor') return json.permission === 'deny' && String(json.agent_message).includes(eventId);
  if (agent === 'opencode') return String(json.hold ?? '').includes(eventId);
  if (agent === 'gemini') return json.decision === 'deny' && String(json.reason).includes(eventId);
  const specific = (agent === 'copilot' ? json : json.hookSpecificOutput) as
    | Record<string, unknown>
    | undefined;
  return (
    specific?.permissionDecision === 'deny' && String(specific.permissionDecisionReason).includes(eventId)
  );
};

/** Throws, naming the hook and what it answered, unless the answer holds the call (a fast wrong answer is no result). */
export const expectHeld = (name: string, agent: HookAgent, answer: string, eventId: string): void => {
  if (!holdsCall(agent, answer, eventId))
    throw new Error(
      `${name} did not hold the call while replan ${eventId} is pending; it answered: ${answer}`,
    );
};
