import { dialectOf } from '../../hooks/events.js';
import { hooksPart, instructionsPart, machinePaths, type SetupDialect } from '../agent-parts.js';
import { everyProjectNote, everyProjectUrl } from '../every-project-note.js';
import { groupedLayout } from '../hook-entries.js';
import type { HookLayout } from '../hook-handlers.js';
import { jsonEdit } from '../json-edit.js';
import { mcpServerChange } from '../mcp-entry.js';
import { allOf, listIncludes } from '../permissions.js';

/** Gemini's matcher groups, with each hook named (its first-run warning lists hooks by name) and given milliseconds. */
const geminiLayout: HookLayout = {
  ...groupedLayout,
  command: (line, timeoutSeconds) => ({
    type: 'command',
    name: 'pulse',
    command: line,
    timeout: timeoutSeconds * 1000,
  }),
};

const SETTINGS = '.gemini/settings.json';

const HOOKS = {
  file: SETTINGS,
  layout: geminiLayout,
  transports: ['curl', 'node'],
  noAutostart:
    "Gemini CLI connects to its MCP servers before its SessionStart hook runs, so a daemon that hook started would come too late: the session would run without pulse's tools, held by its hooks with no way to acknowledge",
  unstartable:
    'Gemini blocks on a hook it cannot start, so it would refuse every prompt ("Agent execution blocked: bash: … No such file or directory") and hold every tool call: the agent can do nothing',
} as const satisfies SetupDialect['hooks'];

/**
 * Gemini CLI: pulse's server (`httpUrl`, with `$PULSE_TOKEN`, which Gemini fills from its
 * environment), its three tools in `tools.allowed`, and command hooks, all in the project's
 * `.gemini/settings.json`; the rule in `GEMINI.md`.
 */
export const geminiSetup: SetupDialect = {
  title: 'Gemini CLI',
  hooks: HOOKS,
  build: (target) => ({
    parts: [
      {
        part: 'mcp',
        file: SETTINGS,
        why: "headless gemini offers the model no MCP tool it would have to ask for: tools.allowed lets exactly pulse's three run, nothing else of any server's (mcpServers.pulse.trust would not hold in plan mode)",
        edit: jsonEdit(
          allOf(
            mcpServerChange(
              'mcpServers',
              { httpUrl: target.url, headers: { Authorization: 'Bearer $PULSE_TOKEN' } },
              'httpUrl',
            ),
            listIncludes(['tools', 'allowed'], dialectOf('gemini').pulseToolNames('pulse')),
          ),
        ),
      },
      hooksPart('gemini', HOOKS, machinePaths(SETTINGS, '~/.gemini/settings.json'), target),
      instructionsPart('GEMINI.md', SETTINGS),
    ],
    notes: [
      `Gemini CLI reads .gemini/settings.json only from the folder it starts in, and only once you trust that folder: start gemini in ${target.project} itself (started in a subfolder it runs without pulse). \`pulse doctor\` says where trust stands.`,
      'The first gemini run lists pulse\'s hooks in a warning ("project-level hooks have been detected") and runs them: there is nothing to approve. A line pulse has for you (the daemon is down) shows on gemini\'s stderr only.',
      everyProjectNote(
        'gemini',
        `gemini mcp add --scope user --transport http pulse ${everyProjectUrl(target.url)}`,
      ),
    ],
  }),
};
