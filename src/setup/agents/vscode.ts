import { instructionsPart, jsonMcpPart, type SetupDialect } from '../agent-parts.js';

/** VS Code's Copilot agent mode: `.vscode/mcp.json` and Copilot's instructions; it runs other agents' hook files. */
export const vscodeSetup: SetupDialect = {
  title: 'VS Code (Copilot agent mode)',
  build: (target) => ({
    parts: [
      jsonMcpPart('.vscode/mcp.json', 'servers', { type: 'http', url: target.url }),
      instructionsPart('.github/copilot-instructions.md', null),
    ],
    notes: [
      "No hooks of its own: VS Code runs the command hooks of .claude/settings.json and .github/hooks/, and pulse answers them in VS Code's terms; `pulse setup claude --hooks curl` gives VS Code's agent pulse's hooks (it runs no http hooks).",
      'VS Code may ask you to trust and start the "pulse" server of .vscode/mcp.json.',
    ],
  }),
};
