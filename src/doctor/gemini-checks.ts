import { geminiGateVerdicts, readGeminiGates } from '../setup/gemini-gates.js';
import type { Finding } from './finding.js';

/** Gemini's own gate on a project's `.gemini/settings.json`: folder trust. */
export const checkGeminiTrust = async (project: string, env: NodeJS.ProcessEnv): Promise<Finding[]> =>
  geminiGateVerdicts(await readGeminiGates(project, env)).map((verdict) => ({
    subject: 'gemini',
    ...verdict,
  }));
