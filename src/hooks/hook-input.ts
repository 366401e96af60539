import type { HookPhase, ToolCall } from './dialect.js';
import { isObject, text } from './dialects/input-fields.js';
import { isVsCodeInput } from './dialects/vscode.js';
import { dialectOf, type HookAgent, phaseOf } from './events.js';
import { unknownEvent } from './hook-refusals.js';

/** One hook invocation, in the terms pulse decides on. */
export interface HookCall {
  agent: HookAgent;
  event: string;
  phase: HookPhase;
  /** The agent session (conversation), `unknown` when the input names none. */
  session: string;
  /** Where the agent works: the daemon is looked up from here, relative paths resolve against it. */
  cwd: string | null;
  /** The tool call, before (or after) it runs. */
  tool: ToolCall | null;
  /** After a tool ran: the `agent_id` in its output, which only pulse's own tools answer with. */
  answeredAgentId: string | null;
  /** A subagent's hook, in its parent's session: only its tool calls are judged. */
  subagent?: boolean;
}

const SESSION_MAX = 200;

/**
 * Reads one hook's stdin JSON as the agent sent it. The event is `--event` when given (what
 * `pulse setup` registers), else the input's `hook_event_name`. VS Code runs other agents' hook
 * files with its own input, so such an input is read, and answered, as VS Code's, under the
 * event it names. A problem is a sentence for stderr.
 */
export const parseHookInput = (
  hookAgent: HookAgent,
  eventOption: string | undefined,
  stdin: string,
): { call: HookCall } | { problem: string } => {
  let input: unknown;
  try {
    input = JSON.parse(stdin);
  } catch (error) {
    const why = stdin.trim() === '' ? 'stdin was empty' : (error as Error).message;
    return { problem: `the ${hookAgent} hook input is not JSON (${why})` };
  }
  if (!isObject(input)) return { problem: `the ${hookAgent} hook input is not a JSON object` };
  const vscode = isVsCodeInput(input);
  const agent: HookAgent = vscode ? 'vscode' : hookAgent;
  const event = vscode ? text(input.hookEventName) : (eventOption ?? text(input.hook_event_name));
  if (event === undefined)
    return { problem: `no --event given and no hook_event_name in the ${agent} hook input` };
  const phase = phaseOf(agent, event);
  if (phase === undefined) return { problem: unknownEvent(agent, event) };
  const { session, ...fields } = dialectOf(agent).read(input, event, phase);
  return { call: { agent, event, phase, session: session?.slice(0, SESSION_MAX) || 'unknown', ...fields } };
};
