import { readdir, readFile, readlink } from 'node:fs/promises';

/** Why a count of inotify watches cannot be made here, or null when `/proc` can tell it. */
export const noInotifyCount = async (): Promise<string | null> => {
  try {
    await readdir('/proc/self/fdinfo');
    return null;
  } catch {
    return 'no /proc/<pid>/fdinfo on this system: inotify watches cannot be counted';
  }
};

/**
 * The inotify watches a process holds: the `inotify wd:` lines in the fdinfo of each of its
 * inotify descriptors (Node keeps one per event loop; every watched path is one `wd`).
 */
export const inotifyWatches = async (pid: number | 'self'): Promise<number> => {
  const fds = await readdir(`/proc/${pid}/fd`);
  let watches = 0;
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    if (target !== 'anon_inode:inotify') continue;
    const info = await readFile(`/proc/${pid}/fdinfo/${fd}`, 'utf8').catch(() => '');
    watches += info.split('\n').filter((line) => line.startsWith('inotify wd:')).length;
  }
  return watches;
};
