import { agentsMdPart, hooksPart, machinePaths, type SetupDialect } from '../agent-parts.js';
import { everyProjectNote, everyProjectUrl } from '../every-project-note.js';
import { groupedLayout } from '../hook-entries.js';
import { tomlMcpEdit } from '../toml-mcp-edit.js';

const HOOKS = {
  file: '.codex/hooks.json',
  layout: groupedLayout,
  transports: ['curl', 'node'],
  autostartEvent: 'SessionStart',
} as const satisfies SetupDialect['hooks'];

/** Codex: `.codex/config.toml`, command hooks in `.codex/hooks.json`, `AGENTS.md`. */
export const codexSetup: SetupDialect = {
  title: 'Codex',
  hooks: HOOKS,
  build: (target) => ({
    parts: [
      { part: 'mcp', file: '.codex/config.toml', edit: tomlMcpEdit(target.url) },
      hooksPart('codex', HOOKS, machinePaths(HOOKS.file, '~/.codex/hooks.json'), target),
      agentsMdPart(),
    ],
    notes: [
      'Codex uses .codex/ only in a project you trust, and runs its hooks only once you reviewed them ("Hooks need review" when codex starts, or /hooks); pulse never does either for you. `pulse doctor` says where both stand.',
      everyProjectNote('codex', `codex mcp add pulse --url ${everyProjectUrl(target.url)}`),
    ],
  }),
};
