import type { HookDialect, HookJson, HookPhase, ToolCall } from '../dialect.js';
import { PULSE_TOOLS } from '../pulse-tools.js';
import { CLAUDE_CODE_EVENTS, writeClaudeCode } from './claude.js';
import { agentIdIn, commandOf, isObject, patchPaths, pathsOf, text } from './input-fields.js';

// VS Code's agent hooks (Preview), as its hooks reference documents them: the common fields in
// camelCase (`hookEventName`, `sessionId`), the tool's in snake_case, its own tool names with
// camelCase arguments. VS Code runs the command hooks of `.claude/settings.json` and of
// `.github/hooks/*.json` (Copilot CLI's), so pulse's Claude Code and Copilot hooks reach it too.

/** The tools that write files, and where each names them. */
const fileTargets = (name: string, args: HookJson): string[] | undefined => {
  switch (name) {
    case 'create_file':
    case 'replace_string_in_file':
    case 'insert_edit_into_file':
    case 'edit_notebook_file':
      return pathsOf(args.filePath);
    case 'multi_replace_string_in_file':
      return Array.isArray(args.replacements)
        ? args.replacements.flatMap((one) => (isObject(one) ? pathsOf(one.filePath) : []))
        : [];
    case 'editFiles':
      return Array.isArray(args.files) ? pathsOf(...args.files) : [];
    case 'apply_patch':
      return patchPaths(text(args.input) ?? '');
    default:
      return undefined;
  }
};

const SHELL_TOOLS = new Set(['run_in_terminal', 'runTerminalCommand']);

const toolOf = (input: HookJson): ToolCall => {
  const name = text(input.tool_name) ?? '';
  const args = isObject(input.tool_input) ? input.tool_input : {};
  const paths = fileTargets(name, args);
  if (paths !== undefined) return { name, paths };
  if (!SHELL_TOOLS.has(name)) return { name };
  // A terminal call without a command string is held: there is nothing to judge as reading.
  return { name, command: commandOf(args.command) ?? '' };
};

/** Whether a hook input is VS Code's, whichever agent's hook file it ran: only VS Code names the event in camelCase. */
export const isVsCodeInput = (input: HookJson): boolean =>
  typeof input.hookEventName === 'string' && input.hook_event_name === undefined;

/** VS Code 1.110's agent hooks: checked against its documented JSON, not run here. */
export const vscodeDialect: HookDialect = {
  events: CLAUDE_CODE_EVENTS,
  read: (input, _event, phase: HookPhase) => ({
    session: text(input.sessionId),
    cwd: text(input.cwd) ?? null,
    tool: phase === 'pre-tool' || phase === 'post-tool' ? toolOf(input) : null,
    answeredAgentId: phase === 'post-tool' ? agentIdIn(input.tool_response) : null,
  }),
  // Claude Code's answers, but a held stop goes inside `hookSpecificOutput`.
  write: (event, phase, verdict) =>
    phase === 'stop' && verdict.hold !== undefined
      ? { hookSpecificOutput: { hookEventName: event, decision: 'block', reason: verdict.hold } }
      : writeClaudeCode(event, phase, verdict),
  readOnlyTools: new Set([
    'read_file',
    'list_dir',
    'file_search',
    'grep_search',
    'semantic_search',
    'search_workspace_symbols',
    'list_code_usages',
    'get_errors',
    'get_changed_files',
    'get_search_view_results',
    'read_project_structure',
    'get_project_setup_info',
    'get_terminal_output',
    'terminal_selection',
    'terminal_last_command',
    'read_notebook_cell_output',
    'copilot_getNotebookSummary',
    'view_image',
    'test_search',
    'fetch_webpage',
    'github_repo',
    'get_vscode_api',
    'manage_todo_list',
    'think',
  ]),
  // `mcp_<server>_<tool>`, as VS Code names a server's tools to the model.
  pulseToolNames: (server) => PULSE_TOOLS.map((tool) => `mcp_${server}_${tool}`),
};
