import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';

const parseLimit = (text: string | undefined): number | null => {
  const limit = Number(text);
  return Number.isInteger(limit) && limit > 0 ? limit : null;
};

const fromProc = async (): Promise<number | null> => {
  const limits = await readFile('/proc/self/limits', 'utf8');
  return parseLimit(/^Max open files\s+(\S+)/m.exec(limits)?.[1]);
};

// Where there is no /proc (macOS), a shell inherits our limit and prints it.
const fromShell = () =>
  new Promise<number | null>((resolve) => {
    execFile('/bin/sh', ['-c', 'ulimit -n'], { timeout: 2000 }, (error, stdout) =>
      resolve(error ? null : parseLimit(stdout.trim())),
    );
  });

/**
 * How many files this process may hold open (the soft limit, as Node raised it to the hard one
 * at start); null when unlimited or unknown.
 */
export const openFileLimit = (): Promise<number | null> => fromProc().catch(fromShell);
