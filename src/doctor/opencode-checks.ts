import { OPENCODE_PLUGIN_FILE } from '../setup/opencode-plugin-file.js';
import { type Finding, problem } from './finding.js';

const DISABLE_PROJECT_CONFIG = 'OPENCODE_DISABLE_PROJECT_CONFIG';

/**
 * What keeps opencode 1.18.33 from using pulse's files in a project it is set up in: its switch
 * for project config (read as opencode reads it, "true" or "1"), which drops opencode.json, AGENTS.md
 * and `.opencode/plugins/` alike (git tracking pulse's plugin is checked with every agent's hooks).
 */
export const checkOpencode = (env: NodeJS.ProcessEnv): Finding[] => {
  const findings: Finding[] = [];
  const disabled = env[DISABLE_PROJECT_CONFIG]?.toLowerCase();
  if (disabled === 'true' || disabled === '1') {
    findings.push(
      problem(
        'opencode',
        `${DISABLE_PROJECT_CONFIG} is set here, so opencode reads none of the project's opencode.json, AGENTS.md or ${OPENCODE_PLUGIN_FILE}: pulse's tools are not offered and no call is held`,
        `unset ${DISABLE_PROJECT_CONFIG} where you run opencode`,
      ),
    );
  }
  return findings;
};
