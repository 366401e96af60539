import { pulse } from '../package/pulse-command.js';
import type { SetupAgent } from './agent-names.js';

/** The endpoint a user-level entry names: the daemon's unprefixed `/mcp`, never one project's `/p/<id>/mcp`. */
export const everyProjectUrl = (projectUrl: string): string => `${new URL(projectUrl).origin}/mcp`;

/**
 * `pulse setup`'s note on one user-level entry for every project: how to add it, and what pulse
 * does with it, since an entry that names no project is answered only while one is served.
 */
export const everyProjectNote = (agent: SetupAgent, how: string): string =>
  `For every project of yours instead: ${how}. That entry names no project: pulse answers it for the only project it serves, and refuses it (naming each project's own URL) while it serves several; then run \`${pulse(`setup ${agent} --write`)}\` in each project.`;
