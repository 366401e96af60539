import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { readDiscovery } from '../store/discovery-file.js';

/** The daemon serving a project, or why there is none to ask. */
export type DaemonLookup = { project: string; url: string } | { project: string; problem: string };

/** Whether a process with this pid runs (as this user or another). */
export const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const lookupIn = (project: string): DaemonLookup | null => {
  const discovery = readDiscovery(join(project, '.pulse'));
  if (discovery === null) return null;
  if (!Number.isInteger(discovery.pid) || typeof discovery.url !== 'string') {
    return { project, problem: '.pulse/daemon.json is not a pulse discovery file' };
  }
  if (!isRunning(discovery.pid)) {
    return { project, problem: `stale .pulse/daemon.json: pid ${discovery.pid} is not running` };
  }
  return { project, url: discovery.url };
};

/**
 * The daemon for the project a hook runs in: the nearest `.pulse/daemon.json` from `start` up,
 * or only in `project` when one is given. Without one, the project is the nearest folder with a
 * `.pulse/` (else `start`), for the message.
 */
export const findDaemon = (start: string, project?: string): DaemonLookup => {
  if (project !== undefined) {
    const root = resolve(project);
    return lookupIn(root) ?? { project: root, problem: 'no .pulse/daemon.json: the daemon is not running' };
  }
  let nearestPulse: string | null = null;
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    const found = lookupIn(dir);
    if (found !== null) return found;
    if (nearestPulse === null && existsSync(join(dir, '.pulse'))) nearestPulse = dir;
    if (dirname(dir) === dir) break;
  }
  return nearestPulse === null
    ? { project: resolve(start), problem: `no .pulse/ in ${resolve(start)} or above` }
    : { project: nearestPulse, problem: 'no .pulse/daemon.json: the daemon is not running' };
};
