import { createHash } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SteerFile, SteerMode, SteerWritten } from '../../machines/steer-context.js';
import { readBoundedText, UnreadableFileError } from './read-bounded.js';
import { INLINE_LIMIT } from './read-tracked-file.js';
import { assertRealFolder, FolderProblemError } from './real-folder.js';
import { replaceFile } from './replace-file.js';

/**
 * The most guidance or constraints pulse writes: what the context resource inlines whole, so every
 * agent reads all of what the user said.
 */
export const STEER_LIMIT = INLINE_LIMIT;

/** A write of guidance or constraints pulse refuses: the message names the file, what is wrong and the fix. */
export class SteerFileError extends Error {
  override name = 'SteerFileError';
}

/** Where `guidance` or `constraints` lives in a project's `.pulse/`. */
export const steerPath = (pulseDir: string, file: SteerFile): string => join(pulseDir, `${file}.md`);

/** Text as a file holds it: no blank lines before it (its first line's indent kept), one newline after. */
const trimmed = (text: string): string => text.replace(/^(?:[ \t]*\r?\n)+/, '').replace(/\s+$/, '');

/**
 * What the file holds after the write: `text` alone (`replace`), or `text` as a new paragraph
 * after what was there (`append`), ending in one newline.
 */
export const steeredText = (before: string | null, text: string, mode: SteerMode): string => {
  const kept = mode === 'append' ? trimmed(before ?? '') : '';
  return `${kept === '' ? trimmed(text) : `${kept}\n\n${trimmed(text)}`}\n`;
};

/** Why a text of `size` bytes is refused for `file`: over what agents read whole. */
export const overLimit = (file: SteerFile, size: number): string =>
  `.pulse/${file}.md would be ${size} bytes, over the ${STEER_LIMIT / 1024} KiB agents read whole: say it shorter.`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Writes guidance.md or constraints.md in `pulseDir` crash-safely (a temp file written whole,
 * fsynced, renamed over it), never through a symlink and only into a real `.pulse/` folder. An
 * empty text, a result over `STEER_LIMIT`, a symlink or anything but a regular file in its place
 * is refused with the fix. The same text as the file holds writes nothing (`changed: false`).
 */
export const writeSteerFile = async (
  pulseDir: string,
  { file, text, mode }: { file: SteerFile; text: string; mode: SteerMode },
): Promise<SteerWritten> => {
  const name = `.pulse/${file}.md`;
  if (text.trim() === '')
    throw new SteerFileError(
      `Nothing to write to ${name}: the text is empty. Say what the agents should know.`,
    );
  try {
    assertRealFolder(pulseDir);
  } catch (error) {
    if (error instanceof FolderProblemError) throw new SteerFileError(error.message);
    throw error;
  }
  const path = steerPath(pulseDir, file);
  const entry = await lstat(path).catch(() => null);
  if (entry?.isSymbolicLink())
    throw new SteerFileError(
      `${name} is a symlink, and pulse never writes through symlinks: replace it with a regular file (or edit its target yourself).`,
    );
  if (entry && !entry.isFile())
    throw new SteerFileError(`${name} is not a regular file: replace it with one.`);
  let before: string | null;
  try {
    before = entry ? await readBoundedText(path, STEER_LIMIT) : null;
  } catch (error) {
    if (error instanceof UnreadableFileError && error.kind === 'too-large')
      throw new SteerFileError(
        `${name} is already over ${STEER_LIMIT / 1024} KiB, more than agents read whole: replace it (without --append) with something shorter.`,
      );
    throw error;
  }
  const after = steeredText(before, text, mode);
  const size = Buffer.byteLength(after);
  if (size > STEER_LIMIT) throw new SteerFileError(overLimit(file, size));
  if (after === before) return { path: name, sha256: sha256(after), size, changed: false };
  await replaceFile(path, after);
  return { path: name, sha256: sha256(after), size, changed: true };
};
