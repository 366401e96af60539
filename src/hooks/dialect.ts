/** Where in the agent's loop a hook runs, whatever the agent calls it. */
export type HookPhase = 'session-start' | 'prompt' | 'pre-tool' | 'post-tool' | 'stop';

/** A tool call about to run: its name, and the shell command or the files it writes, when it has them. */
export interface ToolCall {
  name: string;
  command?: string;
  paths?: string[];
  /** The host's own id of this call (Claude Code's and Codex's `tool_use_id`), when its input gives one. */
  useId?: string;
}

/**
 * What a hook does, before it is put in the agent's format: hold the tool call or the stop (with
 * the reason the agent reads), pass context to the agent, or tell the user something. Empty: let it be.
 */
export interface Verdict {
  hold?: string;
  context?: string;
  notice?: string;
}

/** A hook's input or answer: a JSON object. */
export type HookJson = Record<string, unknown>;

/** What one hook input says, in pulse's terms. */
export interface HookFields {
  /** The agent's session (conversation) id, if the input has one. */
  session: string | undefined;
  /** Where the agent works: the daemon is looked up from here, relative paths resolve against it. */
  cwd: string | null;
  /** The tool call, before (or after) it runs; null for events without one. */
  tool: ToolCall | null;
  /** After a tool ran: the `agent_id` in its output, which only pulse's own tools answer with. */
  answeredAgentId: string | null;
  /** The input comes from a subagent working for `session` (Copilot's `task`): only its tool calls are judged. */
  subagent?: boolean;
}

/**
 * One agent's hooks, in its own terms: the events pulse answers and where each runs, how its input
 * reads, how a verdict is written in its format, and the tool names that matter to a replan.
 */
export interface HookDialect {
  /** Each event pulse answers, in the agent's spelling, and where in the loop it runs. */
  readonly events: Readonly<Record<string, HookPhase>>;
  /** The session, folder and tool call of one input. */
  read(input: HookJson, event: string, phase: HookPhase): HookFields;
  /**
   * The answer for a verdict; what the format cannot say is left out. "Let it be" is never an
   * explicit allow where that would skip the user's own permission prompt.
   */
  write(event: string, phase: HookPhase, verdict: Verdict): HookJson;
  /** The agent's tools that only read or keep its plan: what it needs to replan. */
  readonly readOnlyTools: ReadonlySet<string>;
  /** How the agent names each of pulse's tools under the server name it was given. */
  pulseToolNames(server: string): readonly string[];
  /** The names other releases of the agent give pulse's tools: the hooks run them too, setup grants none. */
  pulseToolAliases?(server: string): readonly string[];
}
