import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, resolve } from 'node:path';

/** The project folder as the kernel knows it (links followed), or as given while it does not exist. */
export const realProjectRoot = (root: string): string => {
  try {
    return realpathSync(resolve(root));
  } catch {
    return resolve(root);
  }
};

/**
 * A project's id on a daemon serving several: the folder's name, URL-safe and short, then 8 hex
 * digits of its real path's sha256, so git worktrees of one repository (one basename) differ.
 */
export const projectId = (root: string): string => {
  const real = realProjectRoot(root);
  const name =
    basename(real)
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[-.]+|-+$/g, '')
      .slice(0, 32) || 'project';
  return `${name}-${createHash('sha256').update(real).digest('hex').slice(0, 8)}`;
};
