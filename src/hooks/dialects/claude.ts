import type { HookDialect, HookFields, HookJson, HookPhase, ToolCall } from '../dialect.js';
import { PULSE_TOOLS } from '../pulse-tools.js';
import { agentIdIn, commandOf, isObject, patchPaths, pathsOf, text } from './input-fields.js';

// Claude Code's hook format, which Codex speaks too: `hook_event_name`, `session_id`, `cwd`,
// `tool_name` and `tool_input` in; `hookSpecificOutput`, `decision`, `systemMessage` out.

/** Claude Code's events, which Codex reuses, by where in the loop each runs. */
export const CLAUDE_CODE_EVENTS = {
  SessionStart: 'session-start',
  UserPromptSubmit: 'prompt',
  PreToolUse: 'pre-tool',
  PostToolUse: 'post-tool',
  Stop: 'stop',
} as const satisfies Record<string, HookPhase>;

const FILE_PATH_TOOLS = new Set(['Write', 'Edit', 'MultiEdit']);

/**
 * The tools that run a shell command, as Claude Code and Codex name them in hook input: only their
 * `command` is judged as a shell line (another server's tool with a `command` argument is not a shell).
 */
const SHELL_TOOLS = new Set(['Bash', 'shell', 'local_shell', 'exec_command']);

/** A tool-call id longer than this is no id pulse can match (Claude Code's are about 30 characters). */
const USE_ID_MAX = 200;

const toolOf = (input: HookJson): ToolCall => {
  const useId = text(input.tool_use_id);
  const call = toolCallOf(input);
  return useId === undefined || useId.length > USE_ID_MAX ? call : { ...call, useId };
};

const toolCallOf = (input: HookJson): ToolCall => {
  const name = text(input.tool_name) ?? '';
  const args = isObject(input.tool_input) ? input.tool_input : {};
  if (name === 'apply_patch') {
    const patch = text(args.command) ?? text(args.input) ?? text(args.patch) ?? '';
    return { name, paths: patchPaths(patch) };
  }
  if (FILE_PATH_TOOLS.has(name)) return { name, paths: pathsOf(args.file_path) };
  if (name === 'NotebookEdit') return { name, paths: pathsOf(args.notebook_path) };
  if (!SHELL_TOOLS.has(name)) return { name };
  // A shell tool without a command string is held: there is nothing to judge as reading.
  return { name, command: commandOf(args.command) ?? '' };
};

/** Reads Claude Code's (and Codex's) hook input. */
export const readClaudeCode = (input: HookJson, _event: string, phase: HookPhase): HookFields => ({
  session: text(input.session_id),
  cwd: text(input.cwd) ?? null,
  tool: phase === 'pre-tool' || phase === 'post-tool' ? toolOf(input) : null,
  answeredAgentId: phase === 'post-tool' ? agentIdIn(input.tool_response) : null,
});

/** Writes a verdict as Claude Code (and Codex) read it; a notice for the user is a `systemMessage`. */
export const writeClaudeCode: HookDialect['write'] = (event, phase, verdict) => {
  const notice = verdict.notice === undefined ? {} : { systemMessage: verdict.notice };
  switch (phase) {
    case 'pre-tool':
      return verdict.hold === undefined
        ? notice
        : {
            hookSpecificOutput: {
              hookEventName: event,
              permissionDecision: 'deny',
              permissionDecisionReason: verdict.hold,
            },
          };
    case 'stop':
      return verdict.hold === undefined ? notice : { decision: 'block', reason: verdict.hold };
    default:
      return verdict.context === undefined
        ? notice
        : { hookSpecificOutput: { hookEventName: event, additionalContext: verdict.context }, ...notice };
  }
};

/** `mcp__<server>__<tool>`: how Claude Code and Codex name pulse's tools. */
export const doubleUnderscoreNames = (server: string): string[] =>
  PULSE_TOOLS.map((tool) => `mcp__${server}__${tool}`);

/** Claude Code 2.1.332. */
export const claudeDialect: HookDialect = {
  events: CLAUDE_CODE_EVENTS,
  read: readClaudeCode,
  write: writeClaudeCode,
  // Read and plan (ToolSearch loads the deferred schemas of MCP tools, pulse's among them), and the names older releases used.
  readOnlyTools: new Set([
    'Read',
    'ToolSearch',
    'ListMcpResourcesTool',
    'ReadMcpResourceTool',
    'ReadMcpResourceDirTool',
    'ListAgents',
    'CronList',
    'WebFetch',
    'WebSearch',
    'TaskCreate',
    'TaskUpdate',
    'TaskList',
    'TaskGet',
    'AskUserQuestion',
    'EnterPlanMode',
    'ExitPlanMode',
    'Grep',
    'Glob',
    'LS',
    'NotebookRead',
    'BashOutput',
    'TodoWrite',
  ]),
  pulseToolNames: doubleUnderscoreNames,
};
