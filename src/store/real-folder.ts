import { lstatSync, readlinkSync } from 'node:fs';
import { basename, dirname } from 'node:path';

type FolderFault = 'missing' | 'symlink' | 'not-a-folder' | 'unchecked';

/** `.pulse/` is not a real folder: pulse neither reads nor writes through it until it is one again. */
export class FolderProblemError extends Error {
  override name = 'FolderProblemError';

  constructor(
    readonly fault: FolderFault,
    message: string,
    /** The message without the folder's name. */
    readonly reason: string,
  ) {
    super(message);
  }
}

const linkTarget = (dir: string): string => {
  try {
    return ` to ${readlinkSync(dir)}`;
  } catch {
    return '';
  }
};

const check = (dir: string): FolderProblemError | null => {
  // Named only for a refusal: the check runs before every tool call's stats.
  const problem = (fault: FolderFault, reason: string) =>
    new FolderProblemError(fault, `${basename(dir)}/ ${reason}`, reason);
  let entry: import('node:fs').Stats | undefined;
  try {
    // The project folder too: start refuses one that is a symlink, and one swapped in later
    // would lead every read and write of .pulse/ into the folder it points to.
    const root = dirname(dir);
    if (lstatSync(root, { throwIfNoEntry: false })?.isSymbolicLink()) {
      return problem(
        'symlink',
        `is inside ${root}, which is a symlink now: pulse never follows the project folder through a symlink; put the real folder back, or start pulse on the folder it points to`,
      );
    }
    entry = lstatSync(dir, { throwIfNoEntry: false });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    return problem('unchecked', `cannot be checked (${code}): check the project folder's permissions`);
  }
  if (entry === undefined) {
    return problem(
      'missing',
      `is missing: pulse does not re-create it while it runs; re-create it (mkdir ${basename(dir)}/) or restart pulse`,
    );
  }
  if (entry.isSymbolicLink()) {
    return problem(
      'symlink',
      `is a symlink${linkTarget(dir)}: pulse never follows ${basename(dir)}/ through a symlink; make it a real folder again`,
    );
  }
  if (!entry.isDirectory()) return problem('not-a-folder', 'is not a folder: remove it and restart pulse');
  return null;
};

/**
 * Why `dir` cannot be used as pulse's folder (missing, a symlink, not a folder, or inside a
 * project folder that is a symlink now), completing
 * "<dir>/ …", or null when it is a real folder. One synchronous lstat: it runs before every scan
 * and every write.
 */
export const folderProblem = (dir: string): string | null => check(dir)?.reason ?? null;

/** Throws `FolderProblemError` unless `dir` is a real folder, so nothing is written through a swapped-in symlink. */
export const assertRealFolder = (dir: string): void => {
  const problem = check(dir);
  if (problem !== null) throw problem;
};

/**
 * Throws `FolderProblemError` when `dir` is there but no real folder (a symlink, a file, or in a
 * project folder swapped for a symlink), so nothing is read through it; a missing one passes,
 * and the read finds no file.
 */
export const assertNotFollowed = (dir: string): void => {
  const problem = check(dir);
  if (problem !== null && problem.fault !== 'missing') throw problem;
};
