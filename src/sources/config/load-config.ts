import { dirname } from 'node:path';
import { readBoundedText, UnreadableFileError } from '../../store/read-bounded.js';
import { assertRealFolder, FolderProblemError } from '../../store/real-folder.js';
import type { SourcesConfig } from './config.js';
import { ConfigError } from './config-error.js';
import { TOP_LEVEL } from './config-parsing.js';

const MAX_FILE_BYTES = 1024 * 1024;

const unreadable = (path: string, problem: string, fix: string, cause?: unknown) =>
  new ConfigError({ file: path, jsonPath: TOP_LEVEL, problem, fix, cause });

/** Reads and parses the file; `null` when there is none (no sources, no pollers). */
export const loadSourcesConfig = async (
  path: string,
  env: Record<string, string | undefined>,
): Promise<SourcesConfig | null> => {
  let text: string | null;
  try {
    // A .pulse/ swapped for a symlink would hand us another folder's servers to start.
    assertRealFolder(dirname(path));
    text = await readBoundedText(path, MAX_FILE_BYTES);
  } catch (error) {
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
  if (text === null) return null;
  // Its zod schemas are built when there is a file to parse: a daemon without sources never pays.
  const { parseSourcesConfig } = await import('./parse-config.js');
  return parseSourcesConfig(text, { file: path, env });
};
