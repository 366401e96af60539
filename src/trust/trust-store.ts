import { createHash, randomBytes } from 'node:crypto';
import {
  lstatSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { ensureUserState, privateFolderProblem, userStateDir } from '../os/user-state.js';

/** The folder of the user's state where each trust is one small file. */
const TRUSTED = 'trusted';
/** A record is a line of JSON; anything bigger was not written by pulse. */
const MAX_RECORD_BYTES = 4096;

/** How a sources.json's exact bytes are named: `sha256:<64 hex digits>`. */
export const sourcesHash = (bytes: Uint8Array | string): string =>
  `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** Whether `text` is a hash as `sourcesHash` writes it (what `--trust-sources` accepts). */
export const isSourcesHash = (text: string): boolean => /^sha256:[0-9a-f]{64}$/.test(text);

/** The project's real path: a trust given to one folder never reaches another through a symlink or `..`. */
export const realProject = (projectRoot: string): string => {
  try {
    return realpathSync(projectRoot);
  } catch {
    return projectRoot;
  }
};

const projectKey = (projectRoot: string) =>
  createHash('sha256').update(realProject(projectRoot)).digest('hex').slice(0, 32);

/** One file per project and content, so that trusting two projects at once never touches the same file. */
const recordName = (projectRoot: string, hash: string) =>
  `${projectKey(projectRoot)}-${hash.slice('sha256:'.length)}.json`;

/** What a record holds: enough to say what it trusts, and to check it is the record of that trust. */
interface TrustRecord {
  project: string;
  hash: string;
  trusted_at: string;
}

/**
 * Whether this user trusted sources.json with exactly these bytes (`hash`) in this project. Only a
 * regular file of ours, closed to other users, in a state folder of ours counts: a symlink, or a
 * file or folder another account could have put there, does not.
 */
export const isTrusted = (
  projectRoot: string,
  hash: string,
  env: NodeJS.ProcessEnv = process.env,
): boolean => {
  if (!isSourcesHash(hash)) return false;
  const root = userStateDir(env);
  const dir = join(root, TRUSTED);
  if (privateFolderProblem(root) !== null || privateFolderProblem(dir) !== null) return false;
  const path = join(dir, recordName(projectRoot, hash));
  try {
    const stats = lstatSync(path);
    if (!stats.isFile() || stats.size > MAX_RECORD_BYTES) return false;
    // Windows has no uid or mode bits to compare (privateFolderProblem says the same of its folder).
    if (process.getuid !== undefined && stats.uid !== process.getuid()) return false;
    if (process.platform !== 'win32' && (stats.mode & 0o022) !== 0) return false;
    const record = JSON.parse(readFileSync(path, 'utf8')) as Partial<TrustRecord>;
    return record.hash === hash && record.project === realProject(projectRoot);
  } catch {
    return false;
  }
};

/**
 * Records that this user trusts sources.json with these bytes in this project, in the user's own
 * state folder (never in the project); returns the record's path. Throws `UserStateError` when
 * that folder is not this user's own.
 */
export const recordTrust = (
  projectRoot: string,
  hash: string,
  env: NodeJS.ProcessEnv = process.env,
): string => {
  if (!isSourcesHash(hash)) throw new Error(`"${hash}" is not a sources.json hash (sha256:<64 hex digits>).`);
  const dir = ensureUserState(TRUSTED, env);
  const path = join(dir, recordName(projectRoot, hash));
  const record: TrustRecord = {
    project: realProject(projectRoot),
    hash,
    trusted_at: new Date().toISOString(),
  };
  // Written whole under a name of its own, then renamed: a reader never sees half a record.
  const temp = join(dir, `.${randomBytes(8).toString('hex')}.tmp`);
  writeFileSync(temp, `${JSON.stringify(record)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    renameSync(temp, path);
  } catch (error) {
    unlinkSync(temp);
    throw error;
  }
  return path;
};

/** Removes every trust this user gave to this project's sources.json, whatever its content; returns how many. */
export const revokeTrust = (projectRoot: string, env: NodeJS.ProcessEnv = process.env): number => {
  const dir = ensureUserState(TRUSTED, env);
  const prefix = `${projectKey(projectRoot)}-`;
  const names = readdirSync(dir).filter((name) => name.startsWith(prefix));
  for (const name of names) unlinkSync(join(dir, name));
  return names.length;
};
