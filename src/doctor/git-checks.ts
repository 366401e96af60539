import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { RUNTIME_FILES } from '../store/pulse-folder.js';
import { type Finding, holds, problem } from './finding.js';

const git = promisify(execFile);

/**
 * Whether git ignores pulse's runtime files in `.pulse/` (state, log, inbox, discovery): committed,
 * they would churn in every diff and carry one machine's state to another. Not a git work tree,
 * or no git: nothing to check.
 */
export const checkGitIgnore = async (project: string, initCommand: string): Promise<Finding[]> => {
  try {
    await git('git', ['-C', project, 'rev-parse', '--is-inside-work-tree']);
  } catch {
    return [];
  }
  const paths = RUNTIME_FILES.map((name) => `.pulse/${name}`);
  let ignored: string[] = [];
  try {
    const { stdout } = await git('git', ['-C', project, 'check-ignore', '--no-index', ...paths]);
    ignored = stdout.split('\n').filter(Boolean);
  } catch (error) {
    // Exit 1: none of them is ignored.
    if ((error as { code?: number }).code !== 1) return [];
  }
  const tracked = paths.filter((path) => !ignored.includes(path));
  if (tracked.length === 0) return [holds('git', "pulse's runtime files in .pulse/ are ignored by git")];
  return [
    problem(
      'git',
      `git would track pulse's runtime files: ${tracked.join(', ')}`,
      `${initCommand} adds .pulse/.gitignore when it is missing; otherwise add those names to .pulse/.gitignore`,
    ),
  ];
};

/** Whether git tracks `file` (relative to the project): false outside a work tree or without git. */
export const isTrackedByGit = async (project: string, file: string): Promise<boolean> => {
  try {
    await git('git', ['-C', project, 'ls-files', '--error-unmatch', '--', file]);
    return true;
  } catch {
    return false;
  }
};
