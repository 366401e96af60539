import type { HookDialect, HookJson, ToolCall } from '../dialect.js';
import { PULSE_TOOLS } from '../pulse-tools.js';
import { agentIdIn, commandOf, isObject, pathsOf, text } from './input-fields.js';

// Gemini CLI's hook format (test/agents/FINDINGS-gemini.md): `session_id`, `cwd`, `tool_name` and
// `tool_input` in; a top-level `decision`/`reason`, `hookSpecificOutput.additionalContext` and
// `systemMessage` (shown on stderr only) out.

/** The tools that write a file, by `file_path` (relative to `cwd` or absolute, as the model wrote it). */
const WRITE_TOOLS = new Set(['write_file', 'replace']);

const toolOf = (input: HookJson): ToolCall => {
  const name = text(input.tool_name) ?? '';
  const args = isObject(input.tool_input) ? input.tool_input : {};
  if (WRITE_TOOLS.has(name)) return { name, paths: pathsOf(args.file_path) };
  // A shell call without a command string is held: there is nothing to judge as reading.
  if (name === 'run_shell_command') return { name, command: commandOf(args.command) ?? '' };
  return { name };
};

/**
 * Gemini CLI 0.61.0 (`.gemini/settings.json`). A hold is `{"decision":"deny"}` with the reason the
 * model reads (never "ask": headless it waits for a confirmation nobody gives); a held stop comes
 * back as the next prompt, so BeforeAgent fires again with pulse's own reason as its `prompt`.
 */
export const geminiDialect: HookDialect = {
  events: {
    SessionStart: 'session-start',
    BeforeAgent: 'prompt',
    BeforeTool: 'pre-tool',
    AfterTool: 'post-tool',
    AfterAgent: 'stop',
  },
  read: (input, _event, phase) => ({
    session: text(input.session_id),
    cwd: text(input.cwd) ?? null,
    tool: phase === 'pre-tool' || phase === 'post-tool' ? toolOf(input) : null,
    // pulse's answer reaches AfterTool as the model's text (`llmContent`) and as `returnDisplay`.
    answeredAgentId: phase === 'post-tool' ? agentIdIn(input.tool_response) : null,
  }),
  write: (event, phase, verdict) => {
    const notice = verdict.notice === undefined ? {} : { systemMessage: verdict.notice };
    if (phase === 'pre-tool' || phase === 'stop') {
      return verdict.hold === undefined ? notice : { decision: 'deny', reason: verdict.hold };
    }
    return verdict.context === undefined
      ? notice
      : { hookSpecificOutput: { hookEventName: event, additionalContext: verdict.context }, ...notice };
  },
  // BeforeTool runs for every tool; these only read, keep the plan or todos, or switch plan mode.
  readOnlyTools: new Set([
    'read_file',
    'list_directory',
    'glob',
    'grep_search',
    'read_mcp_resource',
    'list_mcp_resources',
    'google_web_search',
    'web_fetch',
    'update_topic',
    'list_background_processes',
    'read_background_output',
    'write_todos',
    'enter_plan_mode',
    'exit_plan_mode',
  ]),
  pulseToolNames: (server) => PULSE_TOOLS.map((tool) => `mcp_${server}_${tool}`),
  // Older releases named MCP tools `<server>__<tool>` (google-gemini/gemini-cli#4351).
  pulseToolAliases: (server) => PULSE_TOOLS.map((tool) => `${server}__${tool}`),
};
