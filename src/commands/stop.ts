import { join } from 'node:path';
import { askToRemove } from '../daemon/project-requests.js';
import { daemonServing } from '../hooks/find-daemon.js';
import { isOwnerRunning, LOCK_FILE, type LockOwner, lockHolder } from '../store/daemon-lock.js';
import type { PulsePaths } from '../store/paths.js';
import { requirePulseFolder } from '../store/pulse-folder.js';

/** How long `pulse stop` waits for the daemon's own shutdown (it allows itself 2 s). */
const STOP_LIMIT_MS = 10_000;
const POLL_MS = 50;

const plural = (count: number) => (count === 1 ? '1 other project' : `${count} other projects`);

/** Waits until `owner` has exited, or throws past the limit. */
const waitForExit = async (owner: LockOwner, why: string): Promise<void> => {
  const deadline = Date.now() + STOP_LIMIT_MS;
  while (isOwnerRunning(owner)) {
    if (Date.now() > deadline) {
      throw new Error(
        `pulse (pid ${owner.pid}) did not stop within ${STOP_LIMIT_MS / 1000} s of ${why}. End it with: kill -9 ${owner.pid}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
};

/**
 * `pulse stop`: the daemon that holds the project's lock stops serving it, when it is a pulse
 * daemon of this user's that this user's daemon record names (never a pid that was reused, nor
 * one a lock planted in the repository names): asked over HTTP (`DELETE /projects/<id>`, so the projects it serves beside go on,
 * and it exits after the last), or sent SIGTERM when it serves one project only (an older pulse)
 * or does not answer. Waits until the project is closed, and says what it did. Nothing running
 * is no error.
 */
export const stopDaemon = async (
  paths: PulsePaths,
  env: NodeJS.ProcessEnv = process.env,
  port?: number,
): Promise<string> => {
  requirePulseFolder(paths);
  const holder = await lockHolder(paths.dir);
  if (holder === null || holder.kind === 'stale') return `pulse is not running for ${paths.projectRoot}.`;
  const { owner } = holder;
  if (holder.kind === 'stranger')
    throw new Error(
      `${join(paths.dir, LOCK_FILE)} names pid ${owner.pid}, which is not a pulse daemon of yours serving this project (${holder.why}): nothing stopped; remove the file if it is stale.`,
    );
  const discovery = daemonServing(paths.projectRoot, port);
  if (discovery?.pid === owner.pid && discovery.project_id !== undefined) {
    const removed = await askToRemove(discovery.url, discovery.project_id, env.PULSE_TOKEN).catch(
      (error: Error) => {
        throw new Error(
          `${error.message}; or end the whole daemon, every project it serves, with: kill ${owner.pid}`,
        );
      },
    );
    if (removed !== null && removed.remaining > 0) {
      return `Stopped serving ${paths.projectRoot}; pulse (pid ${owner.pid}) goes on serving ${plural(removed.remaining)}.`;
    }
    if (removed !== null) {
      await waitForExit(owner, 'its last project stopping');
      return `Stopped pulse (pid ${owner.pid}) for ${paths.projectRoot}.`;
    }
  }
  try {
    process.kill(owner.pid, 'SIGTERM');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH')
      return `pulse is not running for ${paths.projectRoot}.`;
    throw new Error(
      `Cannot stop pulse (pid ${owner.pid}) for ${paths.projectRoot}: ${(error as Error).message}. It runs as another user: stop it as that user.`,
    );
  }
  await waitForExit(owner, 'SIGTERM');
  return `Stopped pulse (pid ${owner.pid}) for ${paths.projectRoot}.`;
};
