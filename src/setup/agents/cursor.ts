import { hooksPart, instructionsPart, jsonMcpPart, machinePaths, type SetupDialect } from '../agent-parts.js';
import { everyProjectNote, everyProjectUrl } from '../every-project-note.js';
import { flatLayout } from '../hook-entries.js';

const HOOKS = {
  file: '.cursor/hooks.json',
  layout: flatLayout,
  transports: ['curl', 'node'],
} as const satisfies SetupDialect['hooks'];

const RULE_FRONT_MATTER =
  '---\ndescription: Check pulse for a replan and external events before continuing long-running work\nalwaysApply: true\n---\n\n';

/** Cursor: `.cursor/mcp.json`, command hooks in `.cursor/hooks.json`, a rule that always applies. */
export const cursorSetup: SetupDialect = {
  title: 'Cursor',
  hooks: HOOKS,
  build: (target) => ({
    parts: [
      jsonMcpPart('.cursor/mcp.json', 'mcpServers', { url: target.url }),
      hooksPart('cursor', HOOKS, machinePaths(HOOKS.file, '~/.cursor/hooks.json'), target),
      instructionsPart('.cursor/rules/pulse.mdc', HOOKS.file, RULE_FRONT_MATTER),
    ],
    notes: [
      everyProjectNote(
        'cursor',
        `put the "pulse" server in ~/.cursor/mcp.json with url ${everyProjectUrl(target.url)}`,
      ),
    ],
  }),
};
