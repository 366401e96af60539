import { HOOK_EVENTS, type HookAgent, type HookEventName } from './events.js';

/** Where in the agent's loop a hook runs, whatever the agent calls it. */
export type HookPhase = 'session-start' | 'prompt' | 'pre-tool' | 'post-tool' | 'stop';

const CLAUDE_PHASES: Record<HookEventName<'claude' | 'codex'>, HookPhase> = {
  SessionStart: 'session-start',
  UserPromptSubmit: 'prompt',
  PreToolUse: 'pre-tool',
  PostToolUse: 'post-tool',
  Stop: 'stop',
};

const PHASES: { [A in HookAgent]: Record<HookEventName<A>, HookPhase> } = {
  claude: CLAUDE_PHASES,
  // Codex speaks Claude Code's hook format.
  codex: CLAUDE_PHASES,
  cursor: {
    beforeSubmitPrompt: 'prompt',
    beforeShellExecution: 'pre-tool',
    beforeMCPExecution: 'pre-tool',
    stop: 'stop',
  },
};

/** A tool call about to run: its name, and the shell command or the files it writes, when it has them. */
export interface ToolCall {
  name: string;
  command?: string;
  paths?: string[];
}

/** One hook invocation, in the terms pulse decides on. */
export interface HookCall {
  agent: HookAgent;
  event: string;
  phase: HookPhase;
  /** The agent session (Claude, Codex) or conversation (Cursor). */
  session: string;
  /** Where the agent works: the daemon is looked up from here, relative paths resolve against it. */
  cwd: string | null;
  /** The tool call, before (or after) it runs. */
  tool: ToolCall | null;
  /** After a tool ran: the `agent_id` in its output, which only pulse's own tools answer with. */
  answeredAgentId: string | null;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Codex's shell tool may pass argv as an array. */
const commandOf = (value: unknown): string | undefined =>
  Array.isArray(value) ? value.filter((part) => typeof part === 'string').join(' ') : text(value);

/** The files an `apply_patch` envelope adds, updates, deletes or moves to. */
export const patchPaths = (patch: string): string[] =>
  [...patch.matchAll(/^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$/gm)].map((m) => m[1]!.trim());

const FILE_PATH_TOOLS = new Set(['Write', 'Edit', 'MultiEdit']);

/**
 * The tools that run a shell command, as Claude Code and Codex name them in hook input: only their
 * `command` is judged as a shell line (another server's tool with a `command` argument is not a shell).
 */
const SHELL_TOOLS = new Set(['Bash', 'shell', 'local_shell', 'exec_command']);

/** Claude Code's and Codex's `tool_name` and `tool_input`. */
const claudeTool = (input: Json): ToolCall => {
  const name = text(input.tool_name) ?? '';
  const args = isObject(input.tool_input) ? input.tool_input : {};
  if (name === 'apply_patch') {
    const patch = text(args.command) ?? text(args.input) ?? text(args.patch) ?? '';
    return { name, paths: patchPaths(patch) };
  }
  if (FILE_PATH_TOOLS.has(name))
    return { name, paths: [text(args.file_path)].filter((p) => p !== undefined) };
  if (name === 'NotebookEdit')
    return { name, paths: [text(args.notebook_path)].filter((p) => p !== undefined) };
  if (!SHELL_TOOLS.has(name)) return { name };
  // A shell tool without a command string is held: there is nothing to judge as reading.
  return { name, command: commandOf(args.command) ?? '' };
};

/** Cursor names the event, not the tool: a shell command, or an MCP tool by name. */
const cursorTool = (input: Json, event: string): ToolCall =>
  event === 'beforeShellExecution'
    ? { name: 'shell', command: commandOf(input.command) ?? '' }
    : { name: text(input.tool_name) ?? '' };

/** The phase of one of the agent's hook events; undefined for an event pulse does not answer. */
export const phaseOf = (agent: HookAgent, event: string): HookPhase | undefined =>
  (PHASES[agent] as Record<string, HookPhase>)[event];

const SESSION_MAX = 200;

/** Claude Code gives an MCP tool's output as its text, Codex as the result object: either holds the JSON pulse answered. */
const agentIdIn = (output: unknown): string | null => {
  if (output === undefined) return null;
  const text = typeof output === 'string' ? output : JSON.stringify(output);
  const match = /"agent_id\\?"\s*:\s*\\?"([^"\\]{1,300})/.exec(text);
  return match?.[1] ?? null;
};

const hasTool = (phase: HookPhase) => phase === 'pre-tool' || phase === 'post-tool';

/**
 * Reads one hook's stdin JSON as the agent sent it. The event is `--event` when given (what
 * `pulse setup` registers), else the input's `hook_event_name`. A problem is a sentence for stderr.
 */
export const parseHookInput = (
  agent: HookAgent,
  eventOption: string | undefined,
  stdin: string,
): { call: HookCall } | { problem: string } => {
  let input: unknown;
  try {
    input = JSON.parse(stdin);
  } catch (error) {
    const why = stdin.trim() === '' ? 'stdin was empty' : (error as Error).message;
    return { problem: `the ${agent} hook input is not JSON (${why})` };
  }
  if (!isObject(input)) return { problem: `the ${agent} hook input is not a JSON object` };
  const event = eventOption ?? text(input.hook_event_name);
  if (event === undefined)
    return { problem: `no --event given and no hook_event_name in the ${agent} hook input` };
  const phase = phaseOf(agent, event);
  if (phase === undefined) {
    return {
      problem: `"${event}" is not a ${agent} hook event pulse answers (${HOOK_EVENTS[agent].join(', ')})`,
    };
  }
  const roots = Array.isArray(input.workspace_roots) ? input.workspace_roots.map(text) : [];
  const cursor = agent === 'cursor';
  return {
    call: {
      agent,
      event,
      phase,
      session: text(cursor ? input.conversation_id : input.session_id)?.slice(0, SESSION_MAX) || 'unknown',
      cwd: (cursor ? roots[0] : undefined) ?? text(input.cwd) ?? null,
      tool: !hasTool(phase) ? null : cursor ? cursorTool(input, event) : claudeTool(input),
      answeredAgentId: phase === 'post-tool' ? agentIdIn(input.tool_response) : null,
    },
  };
};
