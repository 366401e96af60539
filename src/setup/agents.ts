import type { SetupAgent } from './agent-names.js';
import type { AgentSetup, SetupDialect, SetupTarget } from './agent-parts.js';
import { claudeSetup } from './agents/claude.js';
import { codexSetup } from './agents/codex.js';
import { copilotSetup } from './agents/copilot.js';
import { cursorSetup } from './agents/cursor.js';
import { geminiSetup } from './agents/gemini.js';
import { opencodeSetup } from './agents/opencode.js';
import { vscodeSetup } from './agents/vscode.js';

const SETUPS: Record<SetupAgent, SetupDialect> = {
  claude: claudeSetup,
  codex: codexSetup,
  cursor: cursorSetup,
  gemini: geminiSetup,
  opencode: opencodeSetup,
  vscode: vscodeSetup,
  copilot: copilotSetup,
};

/** What `pulse setup` knows of the agent, without building its files. */
export const setupDialectOf = (agent: SetupAgent): SetupDialect => SETUPS[agent];

/** The files and entries of the agent, for an MCP endpoint and the way its hooks reach the daemon. */
export const agentSetup = (agent: SetupAgent, target: SetupTarget): AgentSetup => {
  const { title, build } = SETUPS[agent];
  return { agent, title, ...build(target) };
};
