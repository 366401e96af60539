import { existsSync, lstatSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The user's own state folder is missing, someone else's, or open to others: the message says how to fix it. */
export class UserStateError extends Error {
  override name = 'UserStateError';
}

/**
 * Where pulse keeps what belongs to this user and never to a repository (which daemons run, which
 * sources.json files were trusted): `$XDG_STATE_HOME/pulse-agent` (`~/.local/state/pulse-agent`),
 * `~/Library/Application Support/pulse-agent` on macOS, `%LOCALAPPDATA%\pulse-agent` on Windows.
 */
export const userStateDir = (
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string => {
  // $HOME as the given environment has it: a process started for another HOME has that HOME's state.
  const home = platform === 'win32' ? homedir() : env.HOME || homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'pulse-agent');
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'pulse-agent');
  return join(env.XDG_STATE_HOME || join(home, '.local', 'state'), 'pulse-agent');
};

/** Why `dir` cannot be this user's private folder, or null when it is (a real folder, ours, closed to others). */
export const privateFolderProblem = (dir: string): string | null => {
  let stats: ReturnType<typeof lstatSync>;
  try {
    stats = lstatSync(dir);
  } catch (error) {
    return `${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  if (stats.isSymbolicLink()) return `${dir} is a symlink; pulse keeps its state in a real folder only`;
  if (!stats.isDirectory()) return `${dir} is not a folder`;
  // Windows has no uid or mode bits to compare: its profile folder is already the user's own.
  if (process.platform === 'win32' || process.getuid === undefined) return null;
  if (stats.uid !== process.getuid())
    return `${dir} belongs to uid ${stats.uid}, not to you (uid ${process.getuid()})`;
  if ((stats.mode & 0o022) !== 0)
    return `${dir} can be written by other users (mode ${(stats.mode & 0o777).toString(8)}): chmod go-w "${dir}"`;
  return null;
};

/**
 * The user's state folder, or `sub` inside it, created `0700` when missing; throws `UserStateError`
 * when it is a symlink, another user's, or writable by others, since what pulse reads there
 * decides where it connects and what it runs.
 */
export const ensureUserState = (sub?: string, env: NodeJS.ProcessEnv = process.env): string => {
  const root = userStateDir(env);
  const dir = sub === undefined ? root : join(root, sub);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const folder of sub === undefined ? [root] : [root, dir]) {
    const problem = privateFolderProblem(folder);
    if (problem !== null) throw new UserStateError(`pulse's state folder ${problem}.`);
  }
  return dir;
};

/**
 * The user's state folder `sub`, or null while it does not exist; never creates it, so a reader
 * (a hook on every tool call) leaves nothing behind. Throws `UserStateError` as `ensureUserState`.
 */
export const existingUserState = (sub: string, env: NodeJS.ProcessEnv = process.env): string | null => {
  const root = userStateDir(env);
  const dir = join(root, sub);
  for (const folder of [root, dir]) {
    const problem = privateFolderProblem(folder);
    if (problem === null) continue;
    if (!existsSync(folder)) return null;
    throw new UserStateError(`pulse's state folder ${problem}.`);
  }
  return dir;
};
