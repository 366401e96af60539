import { copilotGateVerdicts, readCopilotGates } from '../setup/copilot-gates.js';
import type { Finding } from './finding.js';

/** Copilot's own gate on a project's hooks and MCP servers: folder trust, or the variables that open it. */
export const checkCopilotHome = async (project: string, env: NodeJS.ProcessEnv): Promise<Finding[]> =>
  copilotGateVerdicts(await readCopilotGates(project, env)).map((verdict) => ({
    subject: 'copilot',
    ...verdict,
  }));
