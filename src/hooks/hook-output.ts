import type { Verdict } from './decide.js';
import type { HookAgent } from './events.js';
import type { HookCall, HookPhase } from './hook-input.js';

// A verdict in each agent's own hook format. Claude Code and Codex share one wire format
// (Codex reads Claude Code's fields); Cursor has its own. What a format cannot say is left out.
// "Let it be" is never an explicit allow where that would skip the user's own permission prompt.

type Output = Record<string, unknown>;

const claudeOutput = (event: string, phase: HookPhase, verdict: Verdict): Output => {
  switch (phase) {
    case 'pre-tool':
      return verdict.hold === undefined
        ? {}
        : {
            hookSpecificOutput: {
              hookEventName: event,
              permissionDecision: 'deny',
              permissionDecisionReason: verdict.hold,
            },
          };
    case 'stop':
      if (verdict.hold !== undefined) return { decision: 'block', reason: verdict.hold };
      return verdict.notice === undefined ? {} : { systemMessage: verdict.notice };
    default:
      return verdict.context === undefined
        ? {}
        : { hookSpecificOutput: { hookEventName: event, additionalContext: verdict.context } };
  }
};

const cursorOutput = (phase: HookPhase, verdict: Verdict): Output => {
  switch (phase) {
    case 'pre-tool':
      // Cursor refuses an empty answer here when the hook is set to fail closed.
      return verdict.hold === undefined
        ? { permission: 'allow' }
        : {
            permission: 'deny',
            user_message: 'pulse held this until the agent replans (a guidance or constraints change).',
            agent_message: verdict.hold,
          };
    case 'prompt':
      // beforeSubmitPrompt can only block the user's own prompt, which pulse never does; it cannot add context.
      return { continue: true };
    default:
      return verdict.hold === undefined ? {} : { followup_message: verdict.hold };
  }
};

/** The JSON a hook prints for a verdict. */
export const formatVerdict = (call: Pick<HookCall, 'agent' | 'event' | 'phase'>, verdict: Verdict): string =>
  JSON.stringify(
    call.agent === 'cursor'
      ? cursorOutput(call.phase, verdict)
      : claudeOutput(call.event, call.phase, verdict),
  );

/** What a hook prints to change nothing: when the daemon is down or the input is unreadable. */
export const letBe = (agent: HookAgent, event: string | undefined, phase: HookPhase | undefined): string =>
  phase === undefined ? '{}' : formatVerdict({ agent, event: event ?? '', phase }, {});

/** The warning a hook that does not enforce gives the user, on one line. */
export const notEnforcing = (why: string): string =>
  `pulse: ${why.replace(/\s*\n\s*/g, ' ')}; not enforcing replans.`;

/**
 * "Change nothing", with the one line saying why pulse is not enforcing where the agent shows it:
 * Claude Code and Codex show a `systemMessage` (Codex shows no hook's stderr); Cursor's answers
 * have no place for it.
 */
export const letBeSaying = (
  agent: HookAgent,
  event: string | undefined,
  phase: HookPhase | undefined,
  line: string,
): string =>
  agent === 'cursor'
    ? letBe(agent, event, phase)
    : JSON.stringify({ ...JSON.parse(letBe(agent, event, phase)), systemMessage: line });
