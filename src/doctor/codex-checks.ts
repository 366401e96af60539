import type { Finding } from './finding.js';

/** Codex's own gates on a project's `.codex/`: project trust, and the review of its hooks. */
export const checkCodexHome = async (_project: string, _env: NodeJS.ProcessEnv): Promise<Finding[]> => [];
