import { dirname } from 'node:path';
import { readBounded, UnreadableFileError } from '../../store/read-bounded.js';
import { assertRealFolder, FolderProblemError } from '../../store/real-folder.js';
import { sourcesHash } from '../../trust/trust-store.js';
import type { SourcesConfig } from './config.js';
import { ConfigError } from './config-error.js';
import { TOP_LEVEL } from './config-parsing.js';

const MAX_FILE_BYTES = 1024 * 1024;

const unreadable = (path: string, problem: string, fix: string, cause?: unknown) =>
  new ConfigError({ file: path, jsonPath: TOP_LEVEL, problem, fix, cause });

/** sources.json as read once: its text and the hash of the very bytes it was decoded from, which trust is keyed on. */
export interface SourcesFile {
  path: string;
  text: string;
  hash: string;
}

/** The file's bytes once, bounded; `null` when there is none. Throws a ConfigError saying why it cannot be read. */
export const readSourcesFile = async (path: string): Promise<SourcesFile | null> => {
  try {
    // A .pulse/ swapped for a symlink would hand us another folder's servers to start.
    assertRealFolder(dirname(path));
    const chunks: Buffer[] = [];
    await readBounded(path, MAX_FILE_BYTES, (chunk) => chunks.push(Buffer.from(chunk)));
    const bytes = Buffer.concat(chunks);
    return { path, text: bytes.toString('utf8'), hash: sourcesHash(bytes) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if (error instanceof FolderProblemError) {
      if (error.fault === 'missing') return null;
      throw unreadable(path, 'is not read', error.message, error);
    }
    if (error instanceof UnreadableFileError) {
      throw unreadable(
        path,
        error.problem,
        error.kind === 'too-large'
          ? 'Keep it to servers and sources; a config this big is likely not the file you meant.'
          : 'Replace it with a JSON file, or remove it.',
      );
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM')
      throw unreadable(
        path,
        'cannot be read: permission denied',
        'Make it readable by the user who runs pulse.',
        error,
      );
    throw unreadable(
      path,
      `cannot be read (${code ?? (error as Error).message})`,
      'Check the file and its folder.',
      error,
    );
  }
};

/** Validates and expands a file read by `readSourcesFile`: only for content its user trusts. */
export const parseSourcesFile = async (
  file: SourcesFile,
  env: Record<string, string | undefined>,
): Promise<SourcesConfig> => {
  // Its zod schemas are built when there is a file to parse: a daemon without sources never pays.
  const { parseSourcesConfig } = await import('./parse-config.js');
  return parseSourcesConfig(file.text, { file: file.path, env });
};

/** Reads and parses the file whatever its trust (for tests and `pulse sources list`'s view); `null` when there is none. */
export const loadSourcesConfig = async (
  path: string,
  env: Record<string, string | undefined>,
): Promise<SourcesConfig | null> => {
  const file = await readSourcesFile(path);
  return file === null ? null : parseSourcesFile(file, env);
};
