import { closeSync } from 'node:fs';
import { isatty } from 'node:tty';

/**
 * Keeps a daemon whose terminal closed able to shut down and exit: writes to the dead terminal
 * fail (EIO) without ending the process, and the returned exit first closes the descriptors of a
 * terminal that hung up, because Node 20 aborts when it cannot restore one on exit
 * (nodejs/node#51519).
 */
export const surviveTerminalHangup = (): ((code: number) => never) => {
  const terminals = [0, 1, 2].filter((fd) => isatty(fd));
  // The log file keeps every line; only the copy for a terminal nobody reads is lost.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
  return function exitAfterHangup(code) {
    for (const fd of terminals) {
      if (isatty(fd)) continue;
      try {
        closeSync(fd);
      } catch {
        // Already closed.
      }
    }
    return process.exit(code);
  };
};
