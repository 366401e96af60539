import type { HookAgent } from '../../src/hooks/events.js';

/** Claude Code's PreToolUse input for Bash, which Codex sends too. */
const claudeBash = {
  event: 'PreToolUse',
  input: (command: string, cwd: string, session_id: string) => ({
    session_id,
    cwd,
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command },
  }),
};

/** Each agent's event for a tool call about to run, and its input for a shell command, as the captures in test/fixtures/hooks show. */
export const SHELL_HOOKS: Record<
  HookAgent,
  { event: string; input: (command: string, cwd: string, session: string) => object }
> = {
  claude: claudeBash,
  codex: claudeBash,
  gemini: {
    event: 'BeforeTool',
    input: (command, cwd, session_id) => ({
      session_id,
      cwd,
      hook_event_name: 'BeforeTool',
      tool_name: 'run_shell_command',
      tool_input: { command },
    }),
  },
  copilot: {
    event: 'preToolUse',
    input: (command, cwd, sessionId) => ({
      sessionId,
      timestamp: 0,
      cwd,
      toolName: 'bash',
      toolArgs: { command },
    }),
  },
  cursor: {
    event: 'beforeShellExecution',
    input: (command, cwd, conversation_id) => ({
      conversation_id,
      generation_id: 'g',
      hook_event_name: 'beforeShellExecution',
      workspace_roots: [cwd],
      command,
      cwd,
    }),
  },
  opencode: {
    event: 'tool.execute.before',
    input: (command, cwd, sessionID) => ({
      directory: cwd,
      input: { tool: 'bash', sessionID, callID: 'c' },
      output: { args: { command } },
    }),
  },
  vscode: {
    event: 'PreToolUse',
    input: (command, cwd, sessionId) => ({
      cwd,
      sessionId,
      hookEventName: 'PreToolUse',
      tool_name: 'run_in_terminal',
      tool_input: { command },
    }),
  },
};
