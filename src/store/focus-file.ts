import { lstat, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { FOCUS_FILE } from '../../machines/watcher-context.js';
import { pulse } from '../package/pulse-command.js';
import { readBoundedText, UnreadableFileError } from './read-bounded.js';
import { assertRealFolder, FolderProblemError } from './real-folder.js';

const MAX_FILE_BYTES = 64 * 1024;
/** An ISO 8601 date and time with its zone: without one, the time would be read in the reader's zone. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;
const fixOf = () =>
  `It should be {"until": "<ISO 8601 time>"}, e.g. {"until": "2026-05-01T14:30:00Z"}; set it again with \`${pulse('focus 45m')}\`, or end the focus with \`${pulse('focus off')}\` (or delete the file).`;

/** A focus file pulse cannot read: the message names the file, what is wrong and how to fix it. */
export class FocusFileError extends Error {
  override name = 'FocusFileError';
  readonly file: string;

  constructor(
    file: string,
    problem: string,
    { fix = fixOf(), cause }: { fix?: string; cause?: unknown } = {},
  ) {
    super(`${file} ${problem}. ${fix}`, cause === undefined ? undefined : { cause });
    this.file = file;
  }
}

/** Where a project's focus file is. */
export const focusPath = (pulseDir: string) => join(pulseDir, FOCUS_FILE);

const readBounded = async (path: string): Promise<string | null> => {
  try {
    assertRealFolder(dirname(path));
    return await readBoundedText(path, MAX_FILE_BYTES);
  } catch (error) {
    if (error instanceof FolderProblemError) {
      if (error.fault === 'missing') return null;
      throw new FocusFileError(path, 'is not read', { fix: error.message });
    }
    if (error instanceof UnreadableFileError) {
      // Too big: written wrong, so the usual fix; anything else (a FIFO, a device) is to be removed.
      const fix =
        error.kind === 'too-large' ? {} : { fix: `Remove it; \`${pulse('focus 45m')}\` writes one.` };
      throw new FocusFileError(path, error.problem, fix);
    }
    const code = (error as NodeJS.ErrnoException).code;
    throw new FocusFileError(path, `cannot be read (${code ?? String(error)})`, {
      fix: 'Make it readable by the user who runs pulse, or delete it.',
      cause: error,
    });
  }
};

/**
 * The focus in `.pulse/focus.json`: when the user asked for quiet until, as ms since the epoch.
 * No file, or an `until` at or before `now`, is no focus; a file that does not read as one throws.
 */
export const readFocus = async (pulseDir: string, now = Date.now()): Promise<{ until: number | null }> => {
  const path = focusPath(pulseDir);
  const text = await readBounded(path);
  if (text === null) return { until: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new FocusFileError(path, `is not valid JSON (${(error as Error).message})`, { cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new FocusFileError(path, 'is not a JSON object');
  }
  const until = (parsed as Record<string, unknown>).until;
  if (until === undefined) throw new FocusFileError(path, 'has no "until"');
  const ms = typeof until === 'string' && ISO_TIME.test(until) ? Date.parse(until) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new FocusFileError(
      path,
      `has an "until" that is not an ISO 8601 time with a zone: ${JSON.stringify(until)?.slice(0, 80)}`,
    );
  }
  return { until: ms > now ? ms : null };
};

/** Sets the focus until `untilMs` (written atomically), or ends it (`null` removes the file). */
export const writeFocus = async (pulseDir: string, untilMs: number | null): Promise<void> => {
  const path = focusPath(pulseDir);
  assertRealFolder(pulseDir);
  if (untilMs === null) {
    await rm(path, { force: true });
    return;
  }
  // write-file-atomic would write to a symlink's target, which may be outside .pulse/.
  const entry = await lstat(path).catch(() => null);
  if (entry?.isSymbolicLink()) {
    throw new FocusFileError(path, 'is a symlink, and pulse never writes through symlinks', {
      fix: 'Replace it with a file, or delete it.',
    });
  }
  await writeFileAtomic(path, `${JSON.stringify({ until: new Date(untilMs).toISOString() })}\n`, {
    fsync: true,
  });
};

/** A focus end for people: local time (with the date unless it is today), then the ISO time. */
export const formatFocusEnd = (iso: string, now = new Date()): string => {
  const end = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  const day = `${end.getFullYear()}-${pad(end.getMonth() + 1)}-${pad(end.getDate())}`;
  const today = `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
  const time = `${pad(end.getHours())}:${pad(end.getMinutes())}`;
  return `${day === today ? time : `${day} ${time}`} (${iso})`;
};
