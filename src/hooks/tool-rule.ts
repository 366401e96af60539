import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { HookAgent } from './events.js';
import type { ToolCall } from './hook-input.js';
import { classifyShell } from './read-only-shell.js';

/** pulse's own tools, which always run: the agent needs them to check in and acknowledge. */
export const PULSE_TOOLS = ['pulse_should_interrupt', 'pulse_ack_replan', 'pulse_ack_events'] as const;

/**
 * Each agent's tools that only read or keep its plan, by the names its hooks report: what the
 * agent needs to replan. Tools that write files (their paths) or run shell commands are judged by
 * what they touch; every other tool is held while a replan is pending.
 */
const READ_OR_PLAN_TOOLS: Record<HookAgent, ReadonlySet<string>> = {
  // Claude Code 2.1.332 (read and plan; ToolSearch loads the deferred schemas of MCP tools, pulse's
  // among them), and the names older releases used.
  claude: new Set([
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
  // Codex 0.171 fires PreToolUse for these besides Bash, apply_patch and MCP tools (update_plan: older releases).
  codex: new Set([
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
  // Cursor runs hooks only before shell commands and MCP tools.
  cursor: new Set(),
};

/** How the agent names one of pulse's tools, for the server name it was given (`pulse` by setup). */
const pulseToolNames = (agent: HookAgent, server: string): ReadonlySet<string> =>
  new Set(
    PULSE_TOOLS.flatMap((tool) =>
      // Cursor's beforeMCPExecution reports the bare tool name; older releases prefixed it.
      agent === 'cursor' ? [tool, `MCP:${server}:${tool}`] : [`mcp__${server}__${tool}`],
    ),
  );

const realDir = (path: string): string => {
  try {
    return join(realpathSync(dirname(path)), basename(path));
  } catch {
    return path;
  }
};

/** The same file, also when one path goes through a symlinked folder (macOS's /tmp, say). */
const samePath = (a: string, b: string): boolean => a === b || realDir(a) === realDir(b);

/** Where the tool call runs: relative paths resolve against the agent's working folder. */
export interface ToolContext {
  projectRoot: string;
  cwd: string | null;
  /** The name the agent gives pulse's MCP server. */
  server: string;
}

/** What pulse makes of one tool call: one of its own tools, and whether it may run while a replan is pending. */
export interface ToolJudgement {
  pulseTool: boolean;
  allowed: boolean;
  /** For a held shell command: what in it is more than reading. */
  why?: string;
}

/** Whether the call is one of pulse's own tools, by the exact name the agent gives it under pulse's server. */
export const isPulseTool = (agent: HookAgent, name: string, server: string): boolean =>
  pulseToolNames(agent, server).has(name);

/**
 * Judges a tool call against what the agent needs to replan and acknowledge: pulse's tools (by
 * their exact names under pulse's server), reading and planning, editing `.pulse/plan.md` and
 * nothing else, shell commands that only read.
 */
export const judgeTool = async (
  agent: HookAgent,
  tool: ToolCall,
  context: ToolContext,
): Promise<ToolJudgement> => {
  if (isPulseTool(agent, tool.name, context.server)) return { pulseTool: true, allowed: true };
  if (tool.paths !== undefined) {
    const plan = resolve(context.projectRoot, '.pulse', 'plan.md');
    const base = context.cwd ?? context.projectRoot;
    const allowed = tool.paths.length > 0 && tool.paths.every((path) => samePath(resolve(base, path), plan));
    return { pulseTool: false, allowed };
  }
  if (tool.command !== undefined) {
    const verdict = await classifyShell(tool.command);
    return verdict.readOnly
      ? { pulseTool: false, allowed: true }
      : { pulseTool: false, allowed: false, why: verdict.why };
  }
  return { pulseTool: false, allowed: READ_OR_PLAN_TOOLS[agent].has(tool.name) };
};
