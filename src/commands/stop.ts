import { isOwnerRunning, liveLockOwner } from '../store/daemon-lock.js';
import type { PulsePaths } from '../store/paths.js';
import { requirePulseFolder } from '../store/pulse-folder.js';

/** How long `pulse stop` waits for the daemon's own shutdown (it allows itself 2 s). */
const STOP_LIMIT_MS = 10_000;
const POLL_MS = 50;

/**
 * `pulse stop`: sends SIGTERM to the daemon that holds the project's lock (never a pid that was
 * reused), waits until it has exited, and says what it did. Nothing running is no error.
 */
export const stopDaemon = async (paths: PulsePaths): Promise<string> => {
  requirePulseFolder(paths);
  const owner = await liveLockOwner(paths.dir);
  if (owner === null) return `pulse is not running for ${paths.projectRoot}.`;
  try {
    process.kill(owner.pid, 'SIGTERM');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH')
      return `pulse is not running for ${paths.projectRoot}.`;
    throw new Error(
      `Cannot stop pulse (pid ${owner.pid}) for ${paths.projectRoot}: ${(error as Error).message}. It runs as another user: stop it as that user.`,
    );
  }
  const deadline = Date.now() + STOP_LIMIT_MS;
  while (isOwnerRunning(owner)) {
    if (Date.now() > deadline) {
      throw new Error(
        `pulse (pid ${owner.pid}) did not stop within ${STOP_LIMIT_MS / 1000} s of SIGTERM. End it with: kill -9 ${owner.pid}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return `Stopped pulse (pid ${owner.pid}) for ${paths.projectRoot}.`;
};
