import { lstat, readFile, realpath } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { SetupPart } from './agent-parts.js';
import type { EditOptions, EditOutcome } from './file-edit.js';

/** One file of the setup: what is there now, and what the edit makes of it. */
export interface PlannedFile extends Omit<SetupPart, 'edit'> {
  path: string;
  existed: boolean;
  outcome: EditOutcome;
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

/** Where a path really is, following symlinks as far as the path exists. */
const realLocation = async (path: string): Promise<string> => {
  const rest: string[] = [];
  let probe = path;
  for (;;) {
    try {
      return join(await realpath(probe), ...rest.reverse());
    } catch (error) {
      if (!isMissing(error) || dirname(probe) === probe) throw error;
      if ((await lstat(probe).catch(() => null))?.isSymbolicLink()) {
        throw new Error(`${probe} is a symlink to nothing`);
      }
      rest.push(basename(probe));
      probe = dirname(probe);
    }
  }
};

const refuse = (problem: string, fix: string): { outcome: EditOutcome } => ({
  outcome: { kind: 'invalid', problem, fix },
});

/** The file's text (null if missing), or why pulse will not touch it: outside the project, or not a file. */
const readTarget = async (
  projectRoot: string,
  path: string,
): Promise<{ text: string | null } | { outcome: EditOutcome }> => {
  let real: string;
  try {
    real = await realLocation(path);
  } catch (error) {
    return refuse(
      `cannot be resolved (${(error as Error).message})`,
      'Remove the broken symlink, then run this again.',
    );
  }
  const inside = relative(await realpath(projectRoot), real);
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`)) {
    return refuse(
      `leads outside the project folder, to ${real}`,
      'pulse writes only inside the project: add the entry there by hand.',
    );
  }
  try {
    if (!(await lstat(real)).isFile()) return refuse('is not a file', 'Move it away, then run this again.');
    return { text: await readFile(real, 'utf8') };
  } catch (error) {
    if (isMissing(error)) return { text: null };
    return refuse(`cannot be read (${(error as NodeJS.ErrnoException).code})`, 'Check its permissions.');
  }
};

/** Reads every target and computes its edit, writing nothing, so all can be checked before any is written. */
export const planSetup = (
  projectRoot: string,
  parts: SetupPart[],
  options: EditOptions,
): Promise<PlannedFile[]> =>
  Promise.all(
    parts.map(async ({ edit, ...part }) => {
      const path = join(projectRoot, part.file);
      const target = await readTarget(projectRoot, path);
      if ('outcome' in target) return { ...part, path, existed: true, outcome: target.outcome };
      return { ...part, path, existed: target.text !== null, outcome: edit(target.text, options) };
    }),
  );
