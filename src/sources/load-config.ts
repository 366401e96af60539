import { readFile, stat } from 'node:fs/promises';
import type { SourcesConfig } from './config.js';
import { ConfigError } from './config-error.js';
import { TOP_LEVEL } from './config-parsing.js';
import { parseSourcesConfig } from './parse-config.js';

const MAX_FILE_BYTES = 1024 * 1024;

const unreadable = (path: string, problem: string, fix: string, cause?: unknown) =>
  new ConfigError({ file: path, jsonPath: TOP_LEVEL, problem, fix, cause });

/** Reads and parses the file; `null` when there is none (no sources, no pollers). */
export const loadSourcesConfig = async (
  path: string,
  env: Record<string, string | undefined>,
): Promise<SourcesConfig | null> => {
  let text: string;
  try {
    const info = await stat(path);
    if (!info.isFile())
      throw unreadable(path, 'is not a regular file', 'Replace it with a JSON file, or remove it.');
    if (info.size > MAX_FILE_BYTES) {
      throw unreadable(
        path,
        `is ${info.size} bytes, more than the limit of ${MAX_FILE_BYTES} (1 MiB)`,
        'Keep it to servers and sources; a config this big is likely not the file you meant.',
      );
    }
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
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
  return parseSourcesConfig(text, { file: path, env });
};
