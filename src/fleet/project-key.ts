import { execFile } from 'node:child_process';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { readBoundedText } from '../store/read-bounded.js';

/** The file in `.pulse/` that names the fleet project instead of the git remote. */
export const FLEET_NAME_FILE = 'fleet-project';

/** The most `.pulse/fleet-project` may hold. */
const NAME_FILE_LIMIT = 256;

/** What a fleet project name may be: lower-case letters, digits, `.`, `_`, `-`, 1 to 64 of them. */
const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** Why this project cannot join the fleet; the message names the file and the fix. */
export class FleetKeyError extends Error {
  override name = 'FleetKeyError';
}

/**
 * One key for every clone and worktree of a repository: `git@github.com:a/b.git`,
 * `https://user@github.com/a/b`, `ssh://git@github.com:22/a/b.git/` are all `git:github.com/a/b`.
 * Credentials and ports are dropped and the host is lower-cased; null when `remote` is no URL.
 */
export const normaliseRemote = (remote: string): string | null => {
  const text = remote.trim();
  let host: string;
  let path: string;
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/\/)(.+)$/.exec(text);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return null;
    }
    if (url.protocol === 'file:') return null;
    host = url.hostname;
    path = decodeURIComponent(url.pathname);
  } else if (scp) {
    host = scp[1]!;
    path = scp[2]!;
  } else return null;
  path = path
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .replace(/^\/+/, '')
    .replace(/^~/, '');
  if (host === '' || path === '' || /\s/.test(path)) return null;
  return `git:${host.toLowerCase()}/${path}`;
};

/** `remote.origin.url` of the repository at `root`, or null when there is none (no git, no remote). */
const originUrl = (root: string): Promise<string | null> =>
  new Promise((resolve) => {
    // `git config` runs nothing from the repository (no hooks, no fsmonitor), and is bounded in time.
    execFile(
      'git',
      ['-C', root, 'config', '--get', 'remote.origin.url'],
      { timeout: 5000, maxBuffer: 4096, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } },
      (error, stdout) => resolve(error ? null : stdout.trim() || null),
    );
  });

/**
 * The name `.pulse/fleet-project` gives, or null when there is no such file. The file is
 * repository input: a regular file (never a symlink), at most 256 bytes, one valid name.
 */
export const readFleetName = async (pulseDir: string): Promise<string | null> => {
  const path = join(pulseDir, FLEET_NAME_FILE);
  const entry = await lstat(path).catch(() => null);
  if (entry === null) return null;
  if (!entry.isFile())
    throw new FleetKeyError(
      `.pulse/${FLEET_NAME_FILE} is ${entry.isSymbolicLink() ? 'a symlink' : 'not a regular file'}: pulse reads it only as a regular file; replace it or remove it.`,
    );
  let text: string;
  try {
    text = (await readBoundedText(path, NAME_FILE_LIMIT)) ?? '';
  } catch {
    throw new FleetKeyError(
      `.pulse/${FLEET_NAME_FILE} cannot be read or is over ${NAME_FILE_LIMIT} bytes: it holds one fleet project name.`,
    );
  }
  const name = text.trim();
  if (!NAME.test(name))
    throw new FleetKeyError(
      `.pulse/${FLEET_NAME_FILE} must hold one name of lower-case letters, digits, ".", "_" or "-" (at most 64): fix or remove it.`,
    );
  return name;
};

/**
 * The fleet project key of the project at `root`: the name in `.pulse/fleet-project` when the
 * user allowed that name (`--fleet-project`), else its normalised git remote. A repository cannot
 * pick a fleet project on its own: a name the user did not allow is refused, since a hostile clone
 * could otherwise name another team's project and receive (and send) its steers.
 */
export const fleetProjectKey = async (root: string, allowed: readonly string[]): Promise<string> => {
  const name = await readFleetName(join(root, '.pulse'));
  if (name !== null) {
    if (!allowed.includes(name))
      throw new FleetKeyError(
        `.pulse/${FLEET_NAME_FILE} names the fleet project "${name}", which you did not allow: the project stays out of the fleet. If it is yours, start with --fleet-project ${name} (or PULSE_FLEET_PROJECTS=${name}).`,
      );
    return `name:${name}`;
  }
  const remote = await originUrl(root);
  const key = remote === null ? null : normaliseRemote(remote);
  if (key === null)
    throw new FleetKeyError(
      `${root} has no git remote "origin" to name its fleet project: add one (git remote add origin <url>), or name it in .pulse/${FLEET_NAME_FILE} and start with --fleet-project <name>.`,
    );
  return key;
};
