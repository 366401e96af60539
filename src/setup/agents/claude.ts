import { hookEvents } from '../../hooks/events.js';
import { hooksPart, instructionsPart, type SetupDialect, sharedMcpJsonPart } from '../agent-parts.js';
import { everyProjectNote, everyProjectUrl } from '../every-project-note.js';
import { groupedLayout } from '../hook-entries.js';
import { claudeToolRules, listIncludes } from '../permissions.js';

const HOOKS = {
  file: '.claude/settings.local.json',
  layout: groupedLayout,
  transports: ['http', 'curl', 'node'],
  autostartEvent: 'SessionStart',
  // Claude Code calls no HTTP hook at SessionStart (2.1.332 skips it); its UserPromptSubmit tells the same before the model's first turn.
  registered: (transport) =>
    transport === 'http'
      ? hookEvents('claude').filter((event) => event !== 'SessionStart')
      : hookEvents('claude'),
} as const satisfies SetupDialect['hooks'];

/** Claude Code: `.mcp.json`, HTTP hooks and permission rules in its local settings, `CLAUDE.md`. */
export const claudeSetup: SetupDialect = {
  title: 'Claude Code',
  hooks: HOOKS,
  build: (target) => ({
    parts: [
      sharedMcpJsonPart(target),
      hooksPart(
        'claude',
        HOOKS,
        "your local project settings, which Claude Code keeps out of git: the hooks name this project's path on this machine; pulse's three tools are allowed there (permissions.allow) and its .mcp.json server enabled, so no call of them waits for a click",
        target,
        listIncludes(['permissions', 'allow'], claudeToolRules()),
        listIncludes(['enabledMcpjsonServers'], ['pulse']),
      ),
      instructionsPart('CLAUDE.md', HOOKS.file),
    ],
    notes: [
      everyProjectNote(
        'claude',
        `claude mcp add --scope user --transport http pulse ${everyProjectUrl(target.url)}`,
      ),
    ],
  }),
};
