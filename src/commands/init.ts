import { pulsePaths } from '../store/paths.js';
import { ensureProjectFolder, ensurePulseFolder } from '../store/pulse-folder.js';

/** `pulse init`: creates the project folder if need be and `.pulse/` with its templates; returns what to print. */
export const runInit = async (project: string): Promise<string[]> => {
  const paths = pulsePaths(project);
  const lines: string[] = [];
  if (await ensureProjectFolder(paths.projectRoot))
    lines.push(`Created the project folder ${paths.projectRoot}`);
  const created = await ensurePulseFolder(paths);
  if (created.length === 0) lines.push(`${paths.dir} is already initialised.`);
  for (const name of created) lines.push(`Created .pulse/${name}`);
  return lines;
};
