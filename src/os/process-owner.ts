import { readFileSync, statSync } from 'node:fs';

/** The kernel's start tick of a process and whether it is a zombie, from /proc; null where there is none. */
export const procStat = (pid: number): { start: string; zombie: boolean } | null => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { start: fields[19] ?? '', zombie: fields[0] === 'Z' };
  } catch {
    return null;
  }
};

/** Whose `pid` is: this user's, another user's (with its uid where /proc says), or nobody's (exited or a zombie). */
export type ProcessOwner = { kind: 'mine' } | { kind: 'other'; uid: number | null } | { kind: 'gone' };

const ownerOf = (pid: number): ProcessOwner => {
  // /proc says who owns it; kill(pid, 0) cannot, since it succeeds for every pid as root.
  const proc = (() => {
    try {
      return statSync(`/proc/${pid}`);
    } catch {
      return null;
    }
  })();
  if (proc !== null && process.getuid !== undefined) {
    if (procStat(pid)?.zombie) return { kind: 'gone' };
    return proc.uid === process.getuid() ? { kind: 'mine' } : { kind: 'other', uid: proc.uid };
  }
  try {
    process.kill(pid, 0);
    return { kind: 'mine' };
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
      ? { kind: 'other', uid: null }
      : { kind: 'gone' };
  }
};

/**
 * Whose process `pid` is, counting it gone when it started at another tick than `procStart` (the
 * pid was reused); a null tick, from a system without /proc, checks the pid only.
 */
export const processOwner = (pid: number, procStart: string | null = null): ProcessOwner => {
  if (!Number.isInteger(pid) || pid <= 0) return { kind: 'gone' };
  const owner = ownerOf(pid);
  if (owner.kind === 'gone' || procStart === null) return owner;
  const now = procStat(pid);
  return now === null || now.start === procStart ? owner : { kind: 'gone' };
};

/** Why `pid` is not the live process of this user a record or lock names, or null when it is. */
export const notMyProcess = (pid: number, procStart: string | null = null): string | null => {
  const owner = processOwner(pid, procStart);
  if (owner.kind === 'mine') return null;
  if (owner.kind === 'gone') return `pid ${pid} is not running`;
  return `pid ${pid} belongs to ${owner.uid === null ? 'another user' : `uid ${owner.uid}`}, not to you`;
};
