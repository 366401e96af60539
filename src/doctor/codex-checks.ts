import { gateVerdicts, readCodexGates } from '../setup/codex-gates.js';
import type { Finding } from './finding.js';

/** Codex's own gates on a project's `.codex/`: project trust, and the review of pulse's hooks. */
export const checkCodexHome = async (project: string, env: NodeJS.ProcessEnv): Promise<Finding[]> =>
  gateVerdicts(await readCodexGates(project, env)).map((verdict) => ({ subject: 'codex', ...verdict }));
