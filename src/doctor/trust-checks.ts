import { readSourcesFile } from '../sources/config/load-config.js';
import type { PulsePaths } from '../store/paths.js';
import { trustCommand } from '../trust/trust-command.js';
import { isTrusted } from '../trust/trust-store.js';
import { trustView } from '../trust/trust-view.js';
import { type Finding, holds, problem } from './finding.js';

/**
 * Whether this user trusts the project's sources.json as it is now: untrusted, pulse runs none of
 * its servers and asks no endpoint, which the finding says with the command that trusts it.
 */
export const checkSourcesTrust = async (paths: PulsePaths, env: NodeJS.ProcessEnv): Promise<Finding[]> => {
  const file = await readSourcesFile(paths.sources).catch(() => null);
  if (file === null) return [];
  if (isTrusted(paths.projectRoot, file.hash, env))
    return [holds('sources', `.pulse/sources.json is trusted as it is (${file.hash})`)];
  const { servers, model } = trustView(file.text);
  const what = [
    ...servers.map((server) => `server "${server.name}" (${server.target})`),
    ...(model === null ? [] : [`the model endpoint ${model}`]),
  ];
  return [
    problem(
      'sources',
      `.pulse/sources.json is not trusted (${file.hash}): pulse starts and asks none of ${what.length === 0 ? 'what it names' : what.join(', ')} until you trust it (see what it runs first)`,
      trustCommand(paths.projectRoot),
    ),
  ];
};
