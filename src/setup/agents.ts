import { HOOK_EVENTS, type HookAgent } from '../hooks/events.js';
import { AGENT_RULE_LINES } from '../mcp/agent-rule.js';
import type { SetupAgent } from './agent-names.js';
import type { FileEdit } from './file-edit.js';
import { flatLayout, groupedLayout, hooksChange } from './hook-entries.js';
import {
  AUTOSTART_EVENTS,
  AUTOSTART_TIMEOUT_SECONDS,
  autostartHookCommand,
  type HookTarget,
  type HookTransport,
  hookHandler,
  registeredEvents,
} from './hook-handlers.js';
import { type JsonChange, jsonEdit } from './json-edit.js';
import { markdownBlockEdit } from './markdown-block.js';
import { mcpServerChange } from './mcp-entry.js';
import { allOf, claudeToolRules, listIncludes } from './permissions.js';
import { tomlMcpEdit } from './toml-mcp-edit.js';

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

/** Where the agent is pointed: the MCP endpoint, and how its hooks reach the daemon. */
export interface SetupTarget extends HookTarget {
  url: string;
  transport: HookTransport;
  /** The session-start hook starts the daemon when none answers (`--autostart`). */
  autostart: boolean;
}

/** The hooks part: every event registered for the agent and transport, in its layout, with `more` changes to the same file. */
const hooksPart = (
  agent: HookAgent,
  file: string,
  why: string,
  target: SetupTarget,
  ...more: JsonChange[]
): SetupPart => {
  const registered = registeredEvents(agent, target.transport);
  const autostartEvent = target.autostart ? AUTOSTART_EVENTS[agent] : undefined;
  const specs = HOOK_EVENTS[agent]
    .filter((event) => event === autostartEvent || registered.includes(event))
    .map((event) => ({
      event,
      handler:
        event === autostartEvent
          ? {
              type: 'command',
              command: autostartHookCommand(agent, event, target),
              timeout: AUTOSTART_TIMEOUT_SECONDS,
            }
          : hookHandler(agent, event, target.transport, target),
    }));
  const layout = agent === 'cursor' ? flatLayout : groupedLayout;
  return {
    part: 'hooks',
    file,
    why,
    edit: jsonEdit(allOf(hooksChange(agent, layout, specs, target), ...more)),
  };
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
  `its hooks name this project's path on this machine: keep ${file} out of git (or move its pulse entries to ${userFile} yourself)`;

const CURSOR_RULE_FRONT_MATTER =
  '---\ndescription: Check pulse for a replan and external events before continuing long-running work\nalwaysApply: true\n---\n\n';

/** The files and entries of each agent, for an MCP endpoint and the way its hooks reach the daemon. */
export const agentSetup = (agent: SetupAgent, target: SetupTarget): AgentSetup => {
  const { url } = target;
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
            "your local project settings, which Claude Code keeps out of git: the hooks name this project's path on this machine; pulse's three tools are allowed there (permissions.allow) and its .mcp.json server enabled, so no call of them waits for a click",
            target,
            listIncludes(['permissions', 'allow'], claudeToolRules()),
            listIncludes(['enabledMcpjsonServers'], ['pulse']),
          ),
          instructionsPart('CLAUDE.md', '.claude/settings.local.json'),
        ],
        notes: [
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
            target,
          ),
          instructionsPart('AGENTS.md', '.codex/hooks.json'),
        ],
        notes: [
          'Codex uses .codex/ only in a project you trust, and runs its hooks only once you reviewed them ("Hooks need review" when codex starts, or /hooks); pulse never does either for you. `pulse doctor` says where both stand.',
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
            target,
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
