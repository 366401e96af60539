import type { HookDialect } from '../dialect.js';
import { CLAUDE_CODE_EVENTS, doubleUnderscoreNames, readClaudeCode, writeClaudeCode } from './claude.js';

/** Codex 0.171.0: Claude Code's hook format, with its own tool names. */
export const codexDialect: HookDialect = {
  events: CLAUDE_CODE_EVENTS,
  read: readClaudeCode,
  write: writeClaudeCode,
  // PreToolUse runs for these besides Bash, apply_patch and MCP tools (update_plan: older releases).
  readOnlyTools: new Set([
    'list_mcp_resources',
    'list_mcp_resource_templates',
    'read_mcp_resource',
    'view_image',
    'get_goal',
    'create_goal',
    'update_goal',
    'update_plan',
    'request_user_input',
  ]),
  pulseToolNames: doubleUnderscoreNames,
};
