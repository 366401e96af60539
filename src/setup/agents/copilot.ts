import { PULSE_TOOLS } from '../../hooks/pulse-tools.js';
import type { SetupTarget } from '../agent-parts.js';
import {
  hooksPart,
  instructionsPart,
  machinePaths,
  type SetupDialect,
  sharedMcpJsonPart,
} from '../agent-parts.js';
import { everyProjectNote, everyProjectUrl } from '../every-project-note.js';
import { copilotLayout, hooksChange } from '../hook-entries.js';

const HOOKS = {
  file: '.github/hooks/pulse.json',
  layout: copilotLayout,
  transports: ['curl', 'node'],
  autostartEvent: 'sessionStart',
} as const satisfies SetupDialect['hooks'];

/**
 * Copilot has no setting that approves a tool, and `copilot -p` refuses every call nobody approved:
 * this answers its permission request for exactly pulse's three tools (as `pulse/<tool>`, under the
 * server name setup writes) and for nothing else. `echo '…'` prints the same in bash and PowerShell.
 */
export const COPILOT_PERMISSION_HOOK = {
  type: 'command',
  matcher: `pulse/(${PULSE_TOOLS.join('|')})`,
  command: `echo '{"behavior":"allow"}'`,
  timeoutSec: 10,
};

const approvePulseTools = (target: SetupTarget) =>
  hooksChange(
    'copilot',
    copilotLayout,
    [{ event: 'permissionRequest', handler: COPILOT_PERMISSION_HOOK }],
    target,
  );

/** GitHub Copilot CLI: `.mcp.json` (Claude Code's entry, shared), hooks in `.github/hooks/pulse.json`, its instructions file. */
export const copilotSetup: SetupDialect = {
  title: 'GitHub Copilot CLI',
  hooks: HOOKS,
  build: (target) => ({
    parts: [
      // The same entry as Claude Code's: a project set up for both has one.
      sharedMcpJsonPart(target),
      hooksPart(
        'copilot',
        HOOKS,
        `${machinePaths(HOOKS.file, '~/.copilot/hooks/pulse.json')}; its permissionRequest hook approves pulse's three tools and nothing else, so \`copilot -p\` can run them`,
        target,
        approvePulseTools(target),
      ),
      // The same block as `pulse setup vscode` writes there, so a project set up for both has one.
      instructionsPart('.github/copilot-instructions.md', null),
    ],
    notes: [
      'Copilot loads .github/hooks/ and .mcp.json only in a folder you trust; `copilot -p` skips both without a word otherwise. pulse never trusts a folder for you: `pulse doctor` says where it stands.',
      "Windows: the curl hooks need a POSIX shell; use --hooks node (a program hook, no shell). VS Code's Copilot agent reads .github/hooks/*.json too (its documentation; not run here).",
      everyProjectNote(
        'copilot',
        `put the "pulse" server in ~/.copilot/mcp-config.json with url ${everyProjectUrl(target.url)}`,
      ),
    ],
  }),
};
