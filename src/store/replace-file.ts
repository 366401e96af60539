import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { lstat, open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { assertRealFolder } from './real-folder.js';

/** The replacements under way, so a shutdown can wait for them. */
const inFlight = new Set<Promise<void>>();
/** Their temp files, removed if the process exits before they are renamed (a shutdown past its limit). */
const tempFiles = new Set<string>();
let cleanupOnExit = false;

const removeTempFiles = () => {
  for (const temp of tempFiles) {
    try {
      unlinkSync(temp);
    } catch {}
  }
};

const writeWhole = async (path: string, text: string | Uint8Array): Promise<void> => {
  assertRealFolder(dirname(path));
  const entry = await lstat(path).catch(() => null);
  if (entry?.isSymbolicLink()) await unlink(path);
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const bytes = Buffer.from(text);
  tempFiles.add(temp);
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
  } finally {
    tempFiles.delete(temp);
  }
};

/**
 * Replaces a file crash-safely: a temp file beside it, written whole and fsynced, renamed over
 * it. Not write-file-atomic: it writes once and renames whatever landed, so a disk
 * filling up mid-write would leave a torn file; and it resolves symlinks, renaming over the
 * link's target outside `.pulse/`. Here a symlink put in place of the file is removed first (the
 * target is never written), and a folder swapped for a symlink is refused before anything is
 * written into it.
 */
export const replaceFile = (path: string, text: string | Uint8Array): Promise<void> => {
  if (!cleanupOnExit) {
    cleanupOnExit = true;
    process.once('exit', removeTempFiles);
  }
  const write = writeWhole(path, text);
  const settled = write.then(
    () => undefined,
    () => undefined,
  );
  inFlight.add(settled);
  void settled.then(() => inFlight.delete(settled));
  return write;
};

/** Resolves once no replacement is under way, those started meanwhile included: a shutdown awaits it. */
export const replacementsSettled = async (): Promise<void> => {
  while (inFlight.size > 0) await Promise.all(inFlight);
};
