import { lstat, unlink } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';

/**
 * Replaces a file crash-safely (temp file, fsync, rename). write-file-atomic resolves symlinks
 * and would rename over the link's target, outside `.pulse/`: a symlink someone put in place of
 * the file is removed first, so the new file replaces the link and the target is never written.
 */
export const replaceFile = async (path: string, text: string): Promise<void> => {
  const entry = await lstat(path).catch(() => null);
  if (entry?.isSymbolicLink()) await unlink(path);
  await writeFileAtomic(path, text, { fsync: true });
};
