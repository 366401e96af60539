import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { ToolCall } from './hook-input.js';
import { isReadOnlyShell } from './read-only-shell.js';

const PULSE_TOOL = /(?:^|[^a-z0-9])pulse_(?:ack_replan|should_interrupt|ack_events)$/i;

/** pulse's own tools, whatever prefix the agent gives them (`mcp__pulse__…`, `MCP:pulse:…`, or none). */
export const isPulseTool = (name: string): boolean => PULSE_TOOL.test(name);

/** Tools that only read, which the agent needs to replan: files, searches, MCP resources, its todo list. */
const READ_ONLY_TOOLS = new Set([
  'Read',
  'Grep',
  'Glob',
  'LS',
  'NotebookRead',
  'TodoWrite',
  'WebFetch',
  'WebSearch',
  'BashOutput',
  'ListMcpResourcesTool',
  'ReadMcpResourceTool',
  'list_mcp_resources',
  'list_mcp_resource_templates',
  'read_mcp_resource',
]);

const realDir = (path: string): string => {
  try {
    return join(realpathSync(dirname(path)), basename(path));
  } catch {
    return path;
  }
};

/** The same file, also when one path goes through a symlinked folder (macOS's /tmp, say). */
const samePath = (a: string, b: string): boolean => a === b || realDir(a) === realDir(b);

/**
 * Whether a tool call may run while a replan is pending: what the agent needs to replan and
 * acknowledge (pulse's tools, reading, editing `.pulse/plan.md` and nothing else, shell commands
 * that only read). Relative paths resolve against the agent's working folder.
 */
export const allowedWhilePending = async (
  tool: ToolCall,
  projectRoot: string,
  cwd: string | null,
): Promise<boolean> => {
  if (isPulseTool(tool.name)) return true;
  if (tool.paths !== undefined) {
    const plan = resolve(projectRoot, '.pulse', 'plan.md');
    const base = cwd ?? projectRoot;
    return tool.paths.length > 0 && tool.paths.every((path) => samePath(resolve(base, path), plan));
  }
  if (tool.command !== undefined) return isReadOnlyShell(tool.command);
  return READ_ONLY_TOOLS.has(tool.name);
};
