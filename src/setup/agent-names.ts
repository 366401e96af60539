/** The agents `pulse setup` knows; a module of its own so the CLI can list them without loading the rest. */
export const SETUP_AGENTS = ['claude', 'codex', 'gemini', 'copilot', 'opencode', 'cursor', 'vscode'] as const;

export type SetupAgent = (typeof SETUP_AGENTS)[number];
