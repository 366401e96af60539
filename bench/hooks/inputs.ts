import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HookAgent } from '../../src/hooks/events.js';

/** The shell command every agent's hook input asks to run: it writes, so a pending replan holds it. */
const COMMAND = 'touch src-file';

/** Codex 0.171's own PreToolUse input for a Bash call, captured from the real CLI. */
const CODEX_FIXTURE = new URL(
  '../../../test/fixtures/hooks/codex-0.171.0/PreToolUse-Bash.json',
  import.meta.url,
);

/** Gemini CLI 0.61's own BeforeTool input for a shell call, captured from the real CLI (its command made the same). */
const GEMINI_FIXTURE = new URL(
  '../../../test/fixtures/hooks/gemini-0.61.0/BeforeTool-run_shell_command.json',
  import.meta.url,
);

/** What opencode 1.18.33 passed pulse's plugin for a bash call, captured from the real CLI. */
const OPENCODE_FIXTURE = new URL(
  '../../../test/fixtures/hooks/opencode-1.18.33/tool.execute.before-bash.json',
  import.meta.url,
);

/**
 * Each agent's hook input for one shell call in `project`, as the agent writes it: Claude Code's
 * PreToolUse, Codex's and Gemini's captured ones with their `/PROJECT` replaced, Cursor's
 * beforeShellExecution, Copilot's preToolUse, VS Code's documented PreToolUse, and what pulse's
 * opencode plugin posts (opencode's captured hook arguments, with the project). All ask for the
 * same command, so the daemon does the same work for each.
 */
export const hookInputs = async (project: string): Promise<Record<HookAgent, string>> => {
  const codex = (await readFile(CODEX_FIXTURE, 'utf8')).replaceAll('/PROJECT', project);
  if (!codex.includes(`"command": "${COMMAND}"`))
    throw new Error(`The Codex fixture no longer runs "${COMMAND}": ${codex}`);
  const gemini = JSON.parse((await readFile(GEMINI_FIXTURE, 'utf8')).replaceAll('/PROJECT', project));
  gemini.tool_input.command = COMMAND;
  const opencode = JSON.parse(await readFile(OPENCODE_FIXTURE, 'utf8'));
  opencode.output.args = { command: COMMAND, description: 'Create a file' };
  return {
    opencode: JSON.stringify({ directory: project, ...opencode }),
    claude: JSON.stringify({
      session_id: 'bench-session',
      transcript_path: join(project, 'transcript.jsonl'),
      cwd: project,
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: COMMAND, description: 'Create a file' },
      tool_use_id: 'toolu_bench',
    }),
    codex: JSON.stringify(JSON.parse(codex)),
    cursor: JSON.stringify({
      conversation_id: 'bench-conversation',
      generation_id: 'bench-generation',
      model: 'claude-sonnet',
      hook_event_name: 'beforeShellExecution',
      cursor_version: '1.7.0',
      workspace_roots: [project],
      command: COMMAND,
      cwd: project,
    }),
    gemini: JSON.stringify(gemini),
    copilot: JSON.stringify({
      sessionId: 'bench-session',
      timestamp: 0,
      cwd: project,
      toolName: 'bash',
      toolArgs: { command: COMMAND, description: 'Create a file' },
    }),
    vscode: JSON.stringify({
      timestamp: '2026-12-02T00:00:00.000Z',
      cwd: project,
      sessionId: 'bench-session',
      hookEventName: 'PreToolUse',
      transcript_path: join(project, 'transcript.json'),
      tool_name: 'run_in_terminal',
      tool_input: { command: COMMAND, explanation: 'Create a file', isBackground: false },
      tool_use_id: 'tool-bench',
    }),
  };
};
