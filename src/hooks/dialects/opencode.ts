import type { HookDialect, HookJson, ToolCall } from '../dialect.js';
import { PULSE_TOOLS } from '../pulse-tools.js';
import { agentIdIn, commandOf, isObject, patchPaths, pathsOf, text } from './input-fields.js';

// opencode has no command hooks: pulse's plugin (.opencode/plugins/pulse.js, written by `pulse
// setup opencode`) posts `{directory, input, output}` of each plugin hook it cares about, as
// opencode passed them (test/agents/FINDINGS-opencode.md), and acts on the verdict itself.

/** The tools that write files by `filePath` (absolute, as opencode's tools take it; multiedit: older releases). */
const FILE_TOOLS = new Set(['write', 'edit', 'multiedit']);

const toolOf = (name: string, args: HookJson): ToolCall => {
  if (FILE_TOOLS.has(name)) return { name, paths: pathsOf(args.filePath) };
  if (name === 'apply_patch') return { name, paths: patchPaths(text(args.patchText) ?? '') };
  // A shell call without a command string is held: there is nothing to judge as reading.
  if (name === 'bash') return { name, command: commandOf(args.command) ?? '' };
  return { name };
};

const objectIn = (value: unknown): HookJson => (isObject(value) ? value : {});

/**
 * opencode 1.18.33 through pulse's plugin. Its verdict is pulse's own, as JSON: the plugin throws
 * `hold` in `tool.execute.before` (the model reads it as the tool's result), sends it as the next
 * prompt on `session.idle`, adds `context` to the user's message or the tool's result, and shows
 * `notice` to the user.
 */
export const opencodeDialect: HookDialect = {
  events: {
    'chat.message': 'prompt',
    'tool.execute.before': 'pre-tool',
    'tool.execute.after': 'post-tool',
    'session.idle': 'stop',
  },
  read: (body, _event, phase) => {
    const input = objectIn(body.input);
    const tool = text(input.tool) ?? '';
    return {
      session: text(input.sessionID),
      cwd: text(body.directory) ?? null,
      // The arguments are the before-hook's output, and the after-hook's input.
      tool:
        phase === 'pre-tool'
          ? toolOf(tool, objectIn(objectIn(body.output).args))
          : phase === 'post-tool'
            ? toolOf(tool, objectIn(input.args))
            : null,
      // pulse's answer is the MCP result the after-hook gets: `{content: [{type: "text", text}], structuredContent}`.
      answeredAgentId: phase === 'post-tool' ? agentIdIn(body.output) : null,
    };
  },
  write: (_event, _phase, verdict) => ({ ...verdict }),
  // Reading, searching, fetching, its todo list, asking the user, loading a skill, leaving plan
  // mode, MCP resources, the model's call of a tool that does not exist; `list` and `todoread`: older releases.
  readOnlyTools: new Set([
    'read',
    'glob',
    'grep',
    'list',
    'webfetch',
    'websearch',
    'lsp',
    'skill',
    'todowrite',
    'todoread',
    'question',
    'plan_exit',
    'list_mcp_resources',
    'list_mcp_resource_templates',
    'read_mcp_resource',
    'invalid',
  ]),
  // `<server>_<tool>`, in the model's tool list, the hooks and the permission rules alike.
  pulseToolNames: (server) => PULSE_TOOLS.map((tool) => `${server}_${tool}`),
  // anomalyco/opencode#33533 renames MCP tools `mcp__<server>__<tool>`; 1.18.33 does not yet.
  pulseToolAliases: (server) => PULSE_TOOLS.map((tool) => `mcp__${server}__${tool}`),
};
