import type { HookDialect, HookPhase } from './dialect.js';
import { claudeDialect } from './dialects/claude.js';
import { codexDialect } from './dialects/codex.js';
import { copilotDialect } from './dialects/copilot.js';
import { cursorDialect } from './dialects/cursor.js';
import { geminiDialect } from './dialects/gemini.js';
import { opencodeDialect } from './dialects/opencode.js';
import { vscodeDialect } from './dialects/vscode.js';

/**
 * Every agent whose hooks pulse answers, by the name in its hook route (`/hook/<agent>/<event>`)
 * and in `pulse hook <agent>`; `pulse setup` registers each one's events.
 */
const DIALECTS = {
  claude: claudeDialect,
  codex: codexDialect,
  cursor: cursorDialect,
  gemini: geminiDialect,
  copilot: copilotDialect,
  vscode: vscodeDialect,
  opencode: opencodeDialect,
} as const satisfies Record<string, HookDialect>;

export type HookAgent = keyof typeof DIALECTS;

/** The agents with hooks, in the order they are listed to users. */
export const HOOK_AGENTS = Object.keys(DIALECTS) as HookAgent[];

export const isHookAgent = (value: string): value is HookAgent => Object.hasOwn(DIALECTS, value);

/** The agent's hooks, in its own terms. */
export const dialectOf = (agent: HookAgent): HookDialect => DIALECTS[agent];

/** The events pulse answers for the agent, in its own spelling. */
export const hookEvents = (agent: HookAgent): string[] => Object.keys(DIALECTS[agent].events);

/** The phase of one of the agent's hook events; undefined for an event pulse does not answer. */
export const phaseOf = (agent: HookAgent, event: string): HookPhase | undefined =>
  Object.hasOwn(DIALECTS[agent].events, event) ? DIALECTS[agent].events[event] : undefined;

/** The session `pulse doctor` probes the hook route with: answered, never an agent working in the project. */
export const PROBE_SESSION = 'pulse-doctor';
