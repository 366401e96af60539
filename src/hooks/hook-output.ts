import type { Verdict } from './decide.js';
import type { HookAgent } from './events.js';
import type { HookCall, HookPhase } from './hook-input.js';
import { isPulseTool } from './tool-rule.js';

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

/**
 * Whether this hook's answer can carry news to the agent, so the daemon may count a delivery as
 * announced: Claude's and Codex's context events; for Cursor only a first stop (a follow-up message).
 * Not after pulse's own tools: the agent has just checked in, and knows.
 */
export const canAnnounce = ({ agent, phase, stopRepeated, tool }: HookCall): boolean => {
  if (agent === 'cursor') return phase === 'stop' && !stopRepeated;
  if (phase === 'post-tool') return !isPulseTool(tool?.name ?? '');
  return phase === 'session-start' || phase === 'prompt';
};
