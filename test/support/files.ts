import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

// Files as the tests write and read them: saved whole, as editors do, and read back line by line.

/**
 * Saves a file as most editors do, a temp file in `tempDir` (by default the folder above the
 * file's own, out of a watcher's sight) renamed over it, so no scan ever sees it half-written.
 */
export const save = async (path: string, text: string, tempDir = dirname(dirname(path))): Promise<void> => {
  const temp = join(tempDir, `.save-${randomBytes(4).toString('hex')}`);
  await writeFile(temp, text);
  await rename(temp, path);
};

/** The lines of a JSON-lines file, parsed (none if it does not exist; a line that does not parse throws). */
export const readJsonLines = async <T>(path: string): Promise<T[]> => {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line, index) => {
      try {
        return JSON.parse(line) as T;
      } catch {
        throw new Error(`${path}, line ${index + 1} does not parse: ${line.slice(0, 120)}`);
      }
    });
};
