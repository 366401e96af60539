import { randomBytes } from 'node:crypto';
import { lstat, open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { assertRealFolder } from './real-folder.js';

/**
 * Replaces a file crash-safely: a temp file beside it, written whole and fsynced, renamed over
 * it. Not write-file-atomic: it writes once and renames whatever landed, so a disk
 * filling up mid-write would leave a torn file; and it resolves symlinks, renaming over the
 * link's target outside `.pulse/`. Here a symlink put in place of the file is removed first (the
 * target is never written), and a folder swapped for a symlink is refused before anything is
 * written into it.
 */
export const replaceFile = async (path: string, text: string | Uint8Array): Promise<void> => {
  assertRealFolder(dirname(path));
  const entry = await lstat(path).catch(() => null);
  if (entry?.isSymbolicLink()) await unlink(path);
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const bytes = Buffer.from(text);
  try {
    const handle = await open(temp, 'wx', entry?.isFile() ? entry.mode & 0o777 : 0o644);
    try {
      for (let written = 0; written < bytes.length; ) {
        written += (await handle.write(bytes, written, bytes.length - written)).bytesWritten;
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
};
