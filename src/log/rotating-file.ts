import { lstatSync, renameSync } from 'node:fs';
import { extname } from 'node:path';
import pino from 'pino';

/** When the log file is rotated, and how many rotated files are kept beside the live one. */
export interface Rotation {
  maxBytes: number;
  keep: number;
}

/** 5 MB a file, the live one and two rotated: at most 15 MB of logs in `.pulse/`. */
export const LOG_ROTATION: Rotation = { maxBytes: 5 * 1024 * 1024, keep: 2 };

/** `pulse.log` → `pulse.1.log` (the most recent rotated file), `pulse.2.log`, … */
export const rotatedPath = (path: string, generation: number): string => {
  const extension = extname(path);
  return `${path.slice(0, path.length - extension.length)}.${generation}${extension}`;
};

const sizeOf = (path: string): number | null => {
  try {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) {
      throw new Error(`${path} is a symlink; pulse never writes through symlinks. Replace it with a file.`);
    }
    return stat.size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};

/** Shifts each rotated file one generation up, the oldest falling off, and the live file to generation 1. */
const shift = (path: string, keep: number) => {
  for (let generation = keep; generation >= 1; generation--) {
    const from = generation === 1 ? path : rotatedPath(path, generation - 1);
    try {
      renameSync(from, rotatedPath(path, generation));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
};

/**
 * An append-only file destination for pino that rotates by size and keeps a fixed live name, so
 * `tail -F .pulse/pulse.log` follows it across rotations. pino-roll numbers the live file
 * instead (`pulse.3.log`), which is why this is not pino-roll. Writes are synchronous: a line is
 * in the file before the call returns, so nothing is lost on a crash or a prompt `exit`.
 * Throws when the file cannot be opened; later write and rotation errors go to `onError`.
 */
export const openRotatingFile = (
  path: string,
  { maxBytes, keep }: Rotation = LOG_ROTATION,
  onError: (error: Error) => void = () => {},
) => {
  let size = sizeOf(path) ?? 0;
  const destination = pino.destination({ dest: path, sync: true, append: true });
  destination.on('error', onError);
  destination.on('write', (bytes: number) => {
    size += bytes;
    if (size < maxBytes) return;
    size = 0;
    try {
      shift(path, keep);
    } catch (error) {
      // Not rotated: the live file grows until the next attempt, another maxBytes later.
      onError(error as Error);
      return;
    }
    // The open descriptor now writes to generation 1 (what is left of this write lands there);
    // reopening starts a new live file.
    destination.reopen();
  });
  return destination;
};
