import { instructionsPart, jsonMcpPart, type SetupDialect } from '../agent-parts.js';

/** VS Code's Copilot agent mode: `.vscode/mcp.json` and Copilot's instructions; no hooks. */
export const vscodeSetup: SetupDialect = {
  title: 'VS Code (Copilot agent mode)',
  build: (target) => ({
    parts: [
      jsonMcpPart('.vscode/mcp.json', 'servers', { type: 'http', url: target.url }),
      instructionsPart('.github/copilot-instructions.md', null),
    ],
    notes: [
      "No hooks: VS Code's agent hooks are a preview whose format may still change, so pulse installs none; the agent checks in by the instructions.",
      'VS Code may ask you to trust and start the "pulse" server of .vscode/mcp.json.',
    ],
  }),
};
