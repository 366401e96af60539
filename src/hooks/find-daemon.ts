import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type Discovery, listDaemonRecords, readRecordIn, recordsFolder } from '../store/daemon-record.js';
import { realProjectRoot } from '../store/project-id.js';
import { verifyRecord } from '../store/verify-daemon.js';

/** The daemon serving a project, verified, or why there is none to ask. */
export type DaemonLookup =
  | { project: string; url: string; discovery: Discovery }
  | { project: string; problem: string };

/** What a lookup says when no record names a daemon for the project. */
export const NOT_RUNNING = 'no pulse daemon of yours serves it';

/** The verified daemon of the project at `root` (links followed) from the records in `folder`, or null when none is recorded. */
const lookupIn = (folder: string, root: string): DaemonLookup | null => {
  const read = readRecordIn(folder, root);
  if (read === null) return null;
  if ('problem' in read) return { project: root, problem: read.problem };
  if (read.record.project !== root)
    return { project: root, problem: `the daemon record for ${root} names ${read.record.project}` };
  const verified = verifyRecord(read.record);
  return 'problem' in verified
    ? { project: root, problem: verified.problem }
    : { project: root, url: verified.discovery.url, discovery: verified.discovery };
};

/**
 * The daemon for the project a hook or command runs in, found only through this user's own daemon
 * records (never through a file in the project) and verified: the nearest project from `start` up
 * that a record names, or only `project` when one is given. Without one, the project is the
 * nearest folder with a `.pulse/` (else `start`), for the message.
 */
export const findDaemon = (start: string, project?: string): DaemonLookup => {
  const folder = recordsFolder();
  const real = realProjectRoot(project ?? start);
  if (folder !== null && typeof folder === 'object') return { project: real, problem: folder.problem };
  if (project !== undefined)
    return (folder === null ? null : lookupIn(folder, real)) ?? { project: real, problem: NOT_RUNNING };
  let nearestPulse: string | null = null;
  for (let dir = real; ; dir = dirname(dir)) {
    const found = folder === null ? null : lookupIn(folder, dir);
    if (found !== null) return found;
    if (nearestPulse === null && existsSync(join(dir, '.pulse'))) nearestPulse = dir;
    if (dirname(dir) === dir) break;
  }
  return nearestPulse === null
    ? { project: resolve(start), problem: `no .pulse/ in ${resolve(start)} or above` }
    : { project: nearestPulse, problem: NOT_RUNNING };
};

/** The user named a port (`--port`, `PULSE_PORT`) where no daemon of theirs serves what they asked for. */
export class DaemonPortError extends Error {
  override name = 'DaemonPortError';
}

/** This user's verified daemons (one per project served), newest first. */
const ourDaemons = (): Discovery[] =>
  listDaemonRecords()
    .records.map(verifyRecord)
    .flatMap((verified) => ('discovery' in verified ? [verified.discovery] : []))
    .sort((a, b) => b.started_at.localeCompare(a.started_at));

/** Where this user's daemons listen, for a message: "8765, 9000", or "none runs". */
const ourPorts = (): string => {
  const ports = [...new Set(ourDaemons().map((d) => d.port))].sort((a, b) => a - b);
  return ports.length === 0 ? 'none of yours runs' : `yours listen on ${ports.join(', ')}`;
};

/** The daemon found for `project`, if it listens on `port` (when named); on another port it is an error, never a fallback. */
export const onPort = (discovery: Discovery, project: string, port: number | undefined): Discovery => {
  if (port === undefined || discovery.port === port) return discovery;
  throw new DaemonPortError(
    `Your daemon serving ${project} listens on port ${discovery.port}, not ${port} (--port or PULSE_PORT): name ${discovery.port}, or leave the port out.`,
  );
};

/** The verified daemon serving exactly the project at `root` (on `port`, when named), or null (the lookup says why). */
export const daemonServing = (root: string, port?: number): Discovery | null => {
  const found = findDaemon(root, root);
  return 'discovery' in found ? onPort(found.discovery, found.project, port) : null;
};

/**
 * The origin of this user's daemon, for what concerns every project it serves: with `port`, the
 * one of this user's verified daemons listening there (an error when none does: nothing is sent
 * to a port no record of yours names); else the one serving the project around `cwd`, else the
 * newest; null when none runs.
 */
export const ourDaemonOrigin = (cwd: string, port?: number): string | null => {
  if (port !== undefined) {
    const onPort = ourDaemons().find((daemon) => daemon.port === port);
    if (onPort !== undefined) return new URL(onPort.url).origin;
    throw new DaemonPortError(
      `No pulse daemon of yours listens on port ${port} (${ourPorts()}): pulse sends nothing there. Name the port of a daemon of yours, or leave the port out.`,
    );
  }
  const near = findDaemon(cwd);
  if ('discovery' in near) return new URL(near.url).origin;
  const newest = ourDaemons()[0];
  return newest === undefined ? null : new URL(newest.url).origin;
};
