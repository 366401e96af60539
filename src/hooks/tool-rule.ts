import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { ToolCall } from './dialect.js';
import { dialectOf, type HookAgent } from './events.js';
import { classifyShell } from './read-only-shell.js';

/** How the agent names one of pulse's tools, for the server name it was given (`pulse` by setup). */
const pulseToolNames = (agent: HookAgent, server: string): ReadonlySet<string> => {
  const dialect = dialectOf(agent);
  return new Set([...dialect.pulseToolNames(server), ...(dialect.pulseToolAliases?.(server) ?? [])]);
};

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
  return { pulseTool: false, allowed: dialectOf(agent).readOnlyTools.has(tool.name) };
};
