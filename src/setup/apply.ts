import { constants, copyFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { PlannedFile } from './plan.js';

/**
 * Copies a file before we change it, never over an earlier backup: the first one keeps the user's
 * file as it was before pulse, later ones carry the time.
 */
export const backUp = async (path: string, now = new Date()): Promise<string> => {
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  for (let attempt = 0; ; attempt += 1) {
    const backup =
      attempt === 0
        ? `${path}.pulse-backup`
        : `${path}.pulse-backup-${stamp}${attempt > 1 ? `-${attempt}` : ''}`;
    try {
      await copyFile(path, backup, constants.COPYFILE_EXCL);
      return backup;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
};

/** Writes one planned file (atomically, after a backup if it existed); returns the backup's path. */
export const writePlanned = async (
  planned: PlannedFile & { outcome: { kind: 'write' } },
): Promise<string | null> => {
  await mkdir(dirname(planned.path), { recursive: true });
  const backup = planned.existed ? await backUp(planned.path) : null;
  await writeFileAtomic(planned.path, planned.outcome.text);
  return backup;
};
