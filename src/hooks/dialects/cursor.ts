import type { HookDialect, HookJson } from '../dialect.js';
import { PULSE_TOOLS } from '../pulse-tools.js';
import { commandOf, text } from './input-fields.js';

/** Cursor names the event, not the tool: a shell command, or an MCP tool by name. */
const toolOf = (input: HookJson, event: string) =>
  event === 'beforeShellExecution'
    ? { name: 'shell', command: commandOf(input.command) ?? '' }
    : { name: text(input.tool_name) ?? '' };

/** Cursor's hooks (`.cursor/hooks.json`): checked against its documented JSON, not run here. */
export const cursorDialect: HookDialect = {
  events: {
    beforeSubmitPrompt: 'prompt',
    beforeShellExecution: 'pre-tool',
    beforeMCPExecution: 'pre-tool',
    stop: 'stop',
  },
  read: (input, event, phase) => {
    const roots = Array.isArray(input.workspace_roots) ? input.workspace_roots.map(text) : [];
    return {
      session: text(input.conversation_id),
      cwd: roots[0] ?? text(input.cwd) ?? null,
      tool: phase === 'pre-tool' ? toolOf(input, event) : null,
      answeredAgentId: null,
    };
  },
  // Cursor's answers have no place for a line to the user.
  write: (_event, phase, verdict) => {
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
  },
  // Cursor runs hooks only before shell commands and MCP tools.
  readOnlyTools: new Set(),
  // beforeMCPExecution reports the bare tool name; older releases prefixed it.
  pulseToolNames: (server) => PULSE_TOOLS.flatMap((tool) => [tool, `MCP:${server}:${tool}`]),
};
