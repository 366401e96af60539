import { HOOK_EVENTS, type HookAgent } from '../hooks/events.js';
import { AGENT_RULE_LINES } from '../mcp/agent-rule.js';
import type { SetupAgent } from './agent-names.js';
import type { FileEdit } from './file-edit.js';
import { type HookRuntime, hookCommand, hookCommandSuffix, olderHookCommand } from './hook-command.js';
import { flatLayout, groupedLayout, type HookSpec, hooksChange } from './hook-entries.js';
import { jsonEdit } from './json-edit.js';
import { markdownBlockEdit } from './markdown-block.js';
import { mcpServerChange } from './mcp-entry.js';
import { tomlMcpEdit } from './toml-mcp-edit.js';

/** Seconds Claude Code and Codex give a hook before they cancel it; a pulse hook answers in milliseconds. */
const HOOK_TIMEOUT_SECONDS = 10;

export type PartName = 'mcp' | 'hooks' | 'instructions';

/** One of the three things an agent needs, and the file of the project it goes in. */
export interface SetupPart {
  part: PartName;
  /** Relative to the project folder, with `/` separators. */
  file: string;
  /** Why this file, when that is not obvious. */
  why?: string;
  edit: FileEdit;
}

/** Everything `pulse setup <agent>` prints or writes. */
export interface AgentSetup {
  agent: SetupAgent;
  title: string;
  parts: SetupPart[];
  /** What pulse leaves to the user: user-level places, feature flags, approvals. */
  notes: string[];
}

/** The hooks part: every event of `HOOK_EVENTS[agent]`, in the agent's layout. */
const hooksPart = (agent: HookAgent, file: string, why: string, runtime: HookRuntime): SetupPart => {
  const specs: HookSpec[] = HOOK_EVENTS[agent].map((event) => ({
    event,
    command: hookCommand(agent, event, runtime),
    suffix: hookCommandSuffix(agent, event),
    older: olderHookCommand(agent, event, runtime),
  }));
  const layout = agent === 'cursor' ? flatLayout : groupedLayout(HOOK_TIMEOUT_SECONDS);
  return { part: 'hooks', file, why, edit: jsonEdit(hooksChange(layout, specs)) };
};

/** The instructions part: the rule, plus a line about the hooks when the agent has them. */
const instructionsPart = (file: string, hooksFile: string | null, preamble = ''): SetupPart => {
  const hooksLine = `pulse's hooks (${hooksFile}) may stop you with a message that a replan is pending or that events need the user's attention: then follow the rule above before anything else.`;
  const body = ['## pulse', '', ...AGENT_RULE_LINES, ...(hooksFile === null ? [] : ['', hooksLine])];
  return { part: 'instructions', file, edit: markdownBlockEdit(body.join('\n'), preamble) };
};

const jsonMcpPart = (file: string, serversKey: string, entry: { url: string; type?: 'http' }): SetupPart => ({
  part: 'mcp',
  file,
  edit: jsonEdit(mcpServerChange(serversKey, entry)),
});

const machinePaths = (file: string, userFile: string) =>
  `its hook commands hold this machine's paths of node and pulse: keep ${file} out of git (or move its pulse entries to ${userFile} yourself)`;

const CURSOR_RULE_FRONT_MATTER =
  '---\ndescription: Check pulse for a replan and external events before continuing long-running work\nalwaysApply: true\n---\n\n';

/** The files and entries of each agent, for an MCP endpoint `url` and the hook command's node and CLI. */
export const agentSetup = (agent: SetupAgent, url: string, runtime: HookRuntime): AgentSetup => {
  switch (agent) {
    case 'claude':
      return {
        agent,
        title: 'Claude Code',
        parts: [
          jsonMcpPart('.mcp.json', 'mcpServers', { type: 'http', url }),
          hooksPart(
            'claude',
            '.claude/settings.local.json',
            "your local project settings, which Claude Code keeps out of git: the hook commands hold this machine's paths of node and pulse",
            runtime,
          ),
          instructionsPart('CLAUDE.md', '.claude/settings.local.json'),
        ],
        notes: [
          'Claude Code asks once before it uses a server from .mcp.json; approve "pulse".',
          `For every project of yours instead: claude mcp add --scope user --transport http pulse ${url}`,
        ],
      };
    case 'codex':
      return {
        agent,
        title: 'Codex',
        parts: [
          { part: 'mcp', file: '.codex/config.toml', edit: tomlMcpEdit(url) },
          hooksPart(
            'codex',
            '.codex/hooks.json',
            machinePaths('.codex/hooks.json', '~/.codex/hooks.json'),
            runtime,
          ),
          instructionsPart('AGENTS.md', '.codex/hooks.json'),
        ],
        notes: [
          'Codex reads .codex/config.toml and .codex/hooks.json only in a project you trust.',
          'Hooks need `[features] codex_hooks = true` in config.toml on Codex releases from before hooks were on by default (newer releases run them unless `[features] hooks = false`); pulse does not write that flag.',
          `For every project of yours instead: codex mcp add pulse --url ${url}`,
        ],
      };
    case 'cursor':
      return {
        agent,
        title: 'Cursor',
        parts: [
          jsonMcpPart('.cursor/mcp.json', 'mcpServers', { url }),
          hooksPart(
            'cursor',
            '.cursor/hooks.json',
            machinePaths('.cursor/hooks.json', '~/.cursor/hooks.json'),
            runtime,
          ),
          instructionsPart('.cursor/rules/pulse.mdc', '.cursor/hooks.json', CURSOR_RULE_FRONT_MATTER),
        ],
        notes: ['For every project of yours instead, put the "pulse" server in ~/.cursor/mcp.json.'],
      };
    case 'vscode':
      return {
        agent,
        title: 'VS Code (Copilot agent mode)',
        parts: [
          jsonMcpPart('.vscode/mcp.json', 'servers', { type: 'http', url }),
          instructionsPart('.github/copilot-instructions.md', null),
        ],
        notes: [
          "No hooks: VS Code's agent hooks are a preview whose format may still change, so pulse installs none; the agent checks in by the instructions.",
          'VS Code may ask you to trust and start the "pulse" server of .vscode/mcp.json.',
        ],
      };
  }
};
