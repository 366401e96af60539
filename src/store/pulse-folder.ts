import { createHash } from 'node:crypto';
import { lstatSync, statSync } from 'node:fs';
import { lstat, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PULSE_FILES, type PulseFileName } from '../../machines/pulse-files.js';
import { pulse, shellWord } from '../package/pulse-command.js';
import type { PulsePaths } from './paths.js';
import { readBoundedBytes, refusalOf } from './read-bounded.js';
import { READ_LIMIT } from './read-tracked-file.js';
import { StateFile } from './state-file.js';

/** The templates PulseAgent writes on first start, byte for byte. */
export const TEMPLATES: Record<PulseFileName, string> = {
  'task.md': '# Task\n\nDescribe the current task here.\n',
  'guidance.md': '# Guidance\n\nWrite updated user guidance here. This file can change task direction.\n',
  'constraints.md':
    '# Constraints\n\nWrite project constraints here. Constraints can restrict behavior but must not expand agent permissions.\n',
  'plan.md': '# Plan\n\nWrite the current plan here.\n',
};

/**
 * What pulse writes for itself in `.pulse/` (state, logs, inbox, discovery), kept out of git; the
 * user's markdown files and sources.json are theirs to commit. `.pulse/.gitignore` is created
 * with this once, and is the user's to edit after.
 */
export const GITIGNORE = `# pulse's runtime files: written by the daemon, not for git. Your .md files and sources.json are yours.
state.json
state.json.bak
events.jsonl
daemon.json
daemon.lock*
pulse*.log
inbox.jsonl
dead-letters.jsonl
external_seen.jsonl
focus.json
*.tmp
backups/
`;

/** The runtime files `pulse doctor` checks git ignores (one of each kind the .gitignore names). */
export const RUNTIME_FILES = [
  'state.json',
  'events.jsonl',
  'daemon.json',
  'pulse.log',
  'inbox.jsonl',
  'dead-letters.jsonl',
  'external_seen.jsonl',
  'focus.json',
] as const;

/** A problem with the project folder the user can fix; `message` says how. */
export class ProjectFolderError extends Error {
  override name = 'ProjectFolderError';
}

/** The file's hash, or null when it is missing or refused (a symlink is never followed): the first scan reports why. */
const sha256Of = async (path: string): Promise<string | null> => {
  try {
    const bytes = await readBoundedBytes(path, READ_LIMIT);
    return bytes === null ? null : createHash('sha256').update(bytes).digest('hex');
  } catch {
    return null;
  }
};

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * Creates the project folder when it is missing and its parent exists, so `pulse start -p
 * ../new-project` works on a folder not made yet; true when it created it. Only the last folder
 * of the path: a path whose parent is missing too is more likely a typo than a plan.
 */
export const ensureProjectFolder = async (projectRoot: string): Promise<boolean> => {
  const existing = await lstat(projectRoot).catch(() => null);
  if (existing !== null) return false;
  try {
    await mkdir(projectRoot);
    return true;
  } catch (error) {
    if (code(error) === 'EEXIST') return false;
    if (code(error) === 'ENOENT') {
      throw new ProjectFolderError(
        `Project folder ${projectRoot} does not exist, and neither does ${dirname(projectRoot)}: check the path. pulse creates the project folder itself, but not the folders above it.`,
      );
    }
    throw new ProjectFolderError(
      `Cannot create the project folder ${projectRoot} (${code(error)}). Create it yourself, or pass an existing folder with --project DIR.`,
    );
  }
};

/**
 * Creates `.pulse/` as PulseAgent's first start does: missing templates, an empty log, and a
 * state.json holding the current hashes. Never overwrites a file, never writes through a symlink.
 * Returns the names of the files it created.
 */
export const ensurePulseFolder = async (paths: PulsePaths): Promise<string[]> => {
  try {
    const stat = await lstat(paths.projectRoot);
    if (!stat.isDirectory())
      throw new ProjectFolderError(`Project path ${paths.projectRoot} is not a folder.`);
  } catch (error) {
    if (error instanceof ProjectFolderError) throw error;
    throw new ProjectFolderError(
      `Project folder ${paths.projectRoot} does not exist. Create it, or pass an existing folder with --project DIR.`,
    );
  }
  const existing = await lstat(paths.dir).catch(() => null);
  if (existing?.isSymbolicLink()) {
    throw new ProjectFolderError(
      `${paths.dir} is a symlink; pulse never follows .pulse/ through a symlink (its state, log and lock would live elsewhere). Make it a real folder: move what it points to in its place.`,
    );
  }
  if (existing !== null && !existing.isDirectory()) {
    throw new ProjectFolderError(`${paths.dir} is not a folder. Move it away, and pulse creates .pulse/.`);
  }
  try {
    await mkdir(paths.dir, { recursive: true });
  } catch (error) {
    throw new ProjectFolderError(
      `Cannot create ${paths.dir} (${code(error)}). Check that the project folder is writable by this user.`,
    );
  }
  // pulse's own files, read once at start: refused here with the fix rather than deep inside the load.
  for (const own of [paths.state, paths.events, paths.inbox, paths.deadLetters, paths.seen]) {
    const refused = await refusalOf(own);
    if (refused !== null) throw new ProjectFolderError(refused.naming(own).message);
  }
  const created: string[] = [];
  const create = async (path: string, text: string, name: string) => {
    try {
      // 'wx' fails on any existing entry, a dangling symlink included: nothing is overwritten.
      await writeFile(path, text, { flag: 'wx' });
      created.push(name);
    } catch (error) {
      if (code(error) === 'EEXIST') return;
      if (code(error) === 'EACCES' || code(error) === 'EROFS') {
        throw new ProjectFolderError(
          `Cannot write ${path} (${code(error)}). Make ${paths.dir} writable by this user.`,
        );
      }
      throw error;
    }
  };
  for (const name of PULSE_FILES) await create(paths.file(name), TEMPLATES[name], name);
  await create(paths.events, '', 'events.jsonl');
  await create(join(paths.dir, '.gitignore'), GITIGNORE, '.gitignore');
  try {
    await lstat(paths.state);
  } catch {
    const hashes: Record<string, string | null> = {};
    for (const name of PULSE_FILES) hashes[name] = await sha256Of(paths.file(name));
    await StateFile.fresh(paths.state, paths.projectRoot, hashes).update({});
    created.push('state.json');
  }
  return created;
};

/**
 * Refuses a project folder that is not there (a typo) or has no `.pulse/` (pulse never ran
 * there), saying what to run.
 */
export const requirePulseFolder = (paths: PulsePaths): void => {
  const project = shellWord(paths.projectRoot);
  if (!statSync(paths.projectRoot, { throwIfNoEntry: false })?.isDirectory()) {
    throw new ProjectFolderError(
      `Project folder ${paths.projectRoot} does not exist. Check the path, or pass the project folder with -p DIR.`,
    );
  }
  if (lstatSync(paths.dir, { throwIfNoEntry: false }) === undefined) {
    throw new ProjectFolderError(
      `${paths.projectRoot} has no .pulse/ folder: pulse has never run there. Start it with \`${pulse(`start -p ${project}`)}\` (or create the files only: \`${pulse(`init -p ${project}`)}\`).`,
    );
  }
};
