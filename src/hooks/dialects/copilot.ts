import type { HookDialect, HookJson, HookPhase, ToolCall } from '../dialect.js';
import { PULSE_TOOLS } from '../pulse-tools.js';
import { agentIdIn, commandOf, isObject, patchPaths, pathsOf, text } from './input-fields.js';

// GitHub Copilot CLI's hooks (`.github/hooks/*.json`, camelCase events): `sessionId`, `cwd`,
// `toolName`, `toolArgs` in, with no event name (pulse's command names it); flat answers out.

/** The tools that run a shell command: only their `command` is judged as a shell line. */
const SHELL_TOOLS = new Set(['bash', 'powershell']);

/** The tools that write the file at `path` (`str_replace_editor`: the name older releases used). */
const PATH_TOOLS = new Set(['create', 'edit', 'str_replace_editor']);

/** `toolArgs` as an object: 1.0.102 passes one, older releases and the docs a JSON string. */
const argsOf = (value: unknown): HookJson => {
  if (isObject(value)) return value;
  try {
    const parsed: unknown = JSON.parse(text(value) ?? '');
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
};

const toolOf = (input: HookJson): ToolCall => {
  const name = text(input.toolName) ?? '';
  const args = argsOf(input.toolArgs);
  if (name === 'apply_patch') {
    // A free-form tool (gpt-5 models): 1.0.102 passes the patch text itself as its arguments.
    return { name, paths: patchPaths(text(args.input) ?? text(args.patch) ?? text(input.toolArgs) ?? '') };
  }
  if (PATH_TOOLS.has(name)) return { name, paths: pathsOf(args.path) };
  if (!SHELL_TOOLS.has(name)) return { name };
  // A shell tool without a command string is held: there is nothing to judge as reading.
  return { name, command: commandOf(args.command) ?? '' };
};

/** The answer that adds nothing and lets the agent go on, with a line for the user in its timeline. */
const noticeOf = (notice: string | undefined): HookJson =>
  notice === undefined ? {} : { type: 'progress', message: notice };

/** GitHub Copilot CLI 1.0.102, as its repository hooks file names the events. */
export const copilotDialect: HookDialect = {
  events: {
    sessionStart: 'session-start',
    userPromptSubmitted: 'prompt',
    preToolUse: 'pre-tool',
    postToolUse: 'post-tool',
    agentStop: 'stop',
  },
  read: (input, _event, phase: HookPhase) => {
    const parent = text(input.parentAgentId);
    return {
      // A subagent's events name its own id and its parent's: it works for the parent's session.
      session: parent ?? text(input.sessionId),
      cwd: text(input.cwd) ?? null,
      tool: phase === 'pre-tool' || phase === 'post-tool' ? toolOf(input) : null,
      answeredAgentId: phase === 'post-tool' ? agentIdIn(input.toolResult) : null,
      ...(parent === undefined ? {} : { subagent: true }),
    };
  },
  // A notice alone is a progress line, which Copilot shows in its timeline and takes for no answer.
  write: (_event, phase, verdict) => {
    switch (phase) {
      case 'pre-tool':
        return verdict.hold === undefined
          ? noticeOf(verdict.notice)
          : { permissionDecision: 'deny', permissionDecisionReason: verdict.hold };
      case 'stop':
        return verdict.hold === undefined
          ? noticeOf(verdict.notice)
          : { decision: 'block', reason: verdict.hold };
      default:
        return verdict.context === undefined
          ? noticeOf(verdict.notice)
          : { additionalContext: verdict.context };
    }
  },
  // Reading, searching, its todo list (`sql`, in the session's own database), subagents' output, and help.
  readOnlyTools: new Set([
    'view',
    'grep',
    'rg',
    'glob',
    'sql',
    'session_store_sql',
    'read_bash',
    'list_bash',
    'read_powershell',
    'list_powershell',
    'read_agent',
    'list_agents',
    'skill',
    'fetch_copilot_cli_documentation',
    'web_fetch',
    'ask_user',
    'update_todo',
  ]),
  // `<server>-<tool>` before and after a call (its permission request says `<server>/<tool>`).
  pulseToolNames: (server) => PULSE_TOOLS.map((tool) => `${server}-${tool}`),
};
