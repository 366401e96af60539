import { constants, copyFile, lstat, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { PlannedFile } from './plan.js';

/** Where setup's backups go, in the project: out of its root and its git status. */
export const BACKUP_DIR = join('.pulse', 'backups');

/** Keeps the backup folder out of git whatever `.pulse/.gitignore` says (an older one, or none yet). */
const IGNORE_ALL = "# pulse setup's backups of your files, before pulse changed them: not for git.\n*\n";

/**
 * The folder for a backup of `file` (relative to the project): under `.pulse/backups/`, or beside
 * the file when `.pulse/` is not a real folder, which pulse never writes through.
 */
const backupFolder = async (projectRoot: string, file: string): Promise<string> => {
  const pulseDir = await lstat(join(projectRoot, '.pulse')).catch(() => null);
  if (pulseDir !== null && !pulseDir.isDirectory()) return dirname(join(projectRoot, file));
  const root = join(projectRoot, BACKUP_DIR);
  await mkdir(dirname(join(root, file)), { recursive: true });
  await writeFile(join(root, '.gitignore'), IGNORE_ALL, { flag: 'wx' }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    },
  );
  return dirname(join(root, file));
};

/**
 * Copies a project file before we change it, never over an earlier backup: the first one keeps
 * the user's file as it was before pulse, later ones carry the time. Backups go to
 * `.pulse/backups/<file>`, so none lands in the project's root or in `git status`.
 */
export const backUp = async (projectRoot: string, file: string, now = new Date()): Promise<string> => {
  const folder = await backupFolder(projectRoot, file);
  const name = join(folder, `${file.split('/').pop()}.pulse-backup`);
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  for (let attempt = 0; ; attempt += 1) {
    const backup = attempt === 0 ? name : `${name}-${stamp}${attempt > 1 ? `-${attempt}` : ''}`;
    try {
      await copyFile(join(projectRoot, file), backup, constants.COPYFILE_EXCL);
      return backup;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
};

/** Writes one planned file (atomically, after a backup if it existed); returns the backup's path. */
export const writePlanned = async (
  projectRoot: string,
  planned: PlannedFile & { outcome: { kind: 'write' } },
): Promise<string | null> => {
  await mkdir(dirname(planned.path), { recursive: true });
  const backup = planned.existed ? await backUp(projectRoot, planned.file) : null;
  await writeFileAtomic(planned.path, planned.outcome.text);
  return backup;
};
