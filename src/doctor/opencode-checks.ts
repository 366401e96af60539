import { OPENCODE_PLUGIN_FILE } from '../setup/opencode-plugin-file.js';
import { type Finding, problem } from './finding.js';
import { isTrackedByGit } from './git-checks.js';

const DISABLE_PROJECT_CONFIG = 'OPENCODE_DISABLE_PROJECT_CONFIG';

/**
 * What keeps opencode 1.18.33 from using pulse's files in a project it is set up in: its switch
 * for project config (read as opencode reads it, "true" or "1"), which drops opencode.json, AGENTS.md
 * and `.opencode/plugins/` alike; and git tracking pulse's plugin, which names this machine's path.
 */
export const checkOpencode = async (project: string, env: NodeJS.ProcessEnv): Promise<Finding[]> => {
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
  if (await isTrackedByGit(project, OPENCODE_PLUGIN_FILE)) {
    findings.push(
      problem(
        'opencode',
        `git tracks ${OPENCODE_PLUGIN_FILE}, which names this project's path and port on this machine: in another clone its hooks ask for a project that is not there and fail open`,
        `git rm --cached ${OPENCODE_PLUGIN_FILE}, add it to .gitignore, then commit`,
      ),
    );
  }
  return findings;
};
