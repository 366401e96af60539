import { type HookAgent, hookEvents } from '../hooks/events.js';
import { AGENT_RULE_LINES } from '../mcp/agent-rule.js';
import type { SetupAgent } from './agent-names.js';
import type { FileEdit } from './file-edit.js';
import { hooksChange } from './hook-entries.js';
import type { HookLayout } from './hook-handlers.js';
import {
  AUTOSTART_TIMEOUT_SECONDS,
  autostartHookCommand,
  type FoundPulseHook,
  type HookTarget,
  type HookTransport,
  hookHandler,
} from './hook-handlers.js';
import { type JsonChange, jsonEdit } from './json-edit.js';
import { markdownBlockEdit } from './markdown-block.js';
import { mcpServerChange } from './mcp-entry.js';
import { allOf } from './permissions.js';

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

/** How an agent takes hooks: the project file, its layout, and the events it runs them on. */
export interface HooksPlace {
  file: string;
  layout: HookLayout;
  /** The transports the agent can run, the one to prefer first (curl only where there is one). */
  transports: readonly HookTransport[];
  /** The session-start event where `--autostart` can start the daemon, if the agent has one. */
  autostartEvent?: string;
  /** Why `--autostart` cannot work for this agent, when it has hooks but no such event. */
  noAutostart?: string;
  /** What the agent does when a hook's program is missing (the shell exits 127), if not let the call go on. */
  unstartable?: string;
  /** The events registered for a transport, when not all of the agent's (Claude Code's HTTP hooks skip SessionStart). */
  registered?(transport: HookTransport): readonly string[];
}

/** How an agent without command hooks takes pulse's: a plugin file of pulse's own, which reaches the daemon itself. */
export interface PluginPlace {
  file: string;
  transports: readonly ['plugin'];
  /** pulse's plugin as found in the file's text (the daemon's port and project), or null when the file is not pulse's as it wrote it. */
  installed(text: string): FoundPulseHook | null;
}

/** What `pulse setup` knows of one agent: its name for people, its hooks, its files and notes. */
export interface SetupDialect {
  title: string;
  /** Absent for an agent pulse installs no hooks for. */
  hooks?: HooksPlace | PluginPlace;
  build(target: SetupTarget): Pick<AgentSetup, 'parts' | 'notes'>;
}

/** The hooks part: every event registered for the agent and transport, in its layout, with `more` changes to the same file. */
export const hooksPart = (
  agent: HookAgent,
  place: HooksPlace,
  why: string,
  target: SetupTarget,
  ...more: JsonChange[]
): SetupPart => {
  const registered = place.registered?.(target.transport) ?? hookEvents(agent);
  const autostartEvent = target.autostart ? place.autostartEvent : undefined;
  const specs = hookEvents(agent)
    .filter((event) => event === autostartEvent || registered.includes(event))
    .map((event) => ({
      event,
      handler:
        event === autostartEvent
          ? place.layout.command(autostartHookCommand(agent, event, target), AUTOSTART_TIMEOUT_SECONDS)
          : hookHandler(agent, event, target.transport, target, place.layout),
    }));
  return {
    part: 'hooks',
    file: place.file,
    why,
    edit: jsonEdit(allOf(hooksChange(agent, place.layout, specs, target), ...more)),
  };
};

/** `AGENTS.md`, which Codex and opencode both read: one block for both, naming each one's hooks. */
export const agentsMdPart = (): SetupPart =>
  instructionsPart('AGENTS.md', "Codex's .codex/hooks.json, opencode's plugin .opencode/plugins/pulse.js");

/** The instructions part: the rule, plus a line about the hooks when the agent has them. */
export const instructionsPart = (file: string, hooksFile: string | null, preamble = ''): SetupPart => {
  const hooksLine = `pulse's hooks (${hooksFile}) may stop you with a message that a replan is pending or that events need the user's attention: then follow the rule above before anything else.`;
  const body = ['## pulse', '', ...AGENT_RULE_LINES, ...(hooksFile === null ? [] : ['', hooksLine])];
  return { part: 'instructions', file, edit: markdownBlockEdit(body.join('\n'), preamble) };
};

/** The MCP part for agents whose config is JSON with an object of servers. */
export const jsonMcpPart = (
  file: string,
  serversKey: string,
  entry: { url: string; type?: 'http'; headers?: Record<string, string> },
): SetupPart => ({
  part: 'mcp',
  file,
  edit: jsonEdit(mcpServerChange(serversKey, entry)),
});

/**
 * The `.mcp.json` entry Claude Code and Copilot CLI share: both fill `${PULSE_TOKEN:-}` in a header
 * from their environment, empty when unset, which a daemon without a token ignores.
 */
export const sharedMcpJsonPart = (target: SetupTarget): SetupPart =>
  jsonMcpPart('.mcp.json', 'mcpServers', {
    type: 'http',
    url: target.url,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the agents' own `${VAR:-}` syntax, not a template.
    headers: { Authorization: 'Bearer ${PULSE_TOKEN:-}' },
  });

/** Why a hooks file should stay out of git. */
export const machinePaths = (file: string, userFile: string) =>
  `its hooks name this project's path on this machine: keep ${file} out of git (or move its pulse entries to ${userFile} yourself)`;
