import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningDaemon, removeProject, startDaemon, tempProject } from '../support/daemon.js';

/*
 * One daemon per project, through crashes: `.pulse/daemon.lock` survives a kill -9 and
 * is taken over by the next start; starts racing for a dead owner's lock end with exactly one
 * daemon; a lock naming a pid that now belongs to another process is taken over too.
 */

const daemons: RunningDaemon[] = [];
const projects: string[] = [];

afterEach(async () => {
  await Promise.all([...daemons.splice(0).map((d) => d.kill9()), ...projects.splice(0).map(removeProject)]);
});

const project = async () => {
  const dir = await tempProject('pulse-lock-');
  projects.push(dir);
  return dir;
};

const lockOf = async (dir: string) =>
  JSON.parse(await readFile(join(dir, '.pulse', 'daemon.lock'), 'utf8')) as {
    pid: number;
    proc_start: string;
  };

describe('the daemon lock through crashes', () => {
  it('survives a kill -9 and is taken over by the next start', async () => {
    const dir = await project();
    const first = await startDaemon(dir);
    await first.kill9();
    expect((await lockOf(dir)).pid, 'a kill -9 releases nothing').toBe(first.process.pid);
    const second = await startDaemon(dir);
    daemons.push(second);
    expect((await lockOf(dir)).pid).toBe(second.process.pid);
  });

  it('lets exactly one of two starts racing for a dead owner’s lock serve; the other names it', async () => {
    const dir = await project();
    let dead = await startDaemon(dir);
    for (let round = 0; round < 5; round++) {
      await dead.kill9();
      const [a, b] = await Promise.allSettled([startDaemon(dir), startDaemon(dir)]);
      const won = [a, b].filter((r): r is PromiseFulfilledResult<RunningDaemon> => r.status === 'fulfilled');
      const lost = [a, b].filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      daemons.push(...won.map((r) => r.value));
      expect(won, `round ${round}: one daemon serves`).toHaveLength(1);
      expect(String(lost[0]!.reason)).toContain(
        `pulse is already running for this project (pid ${won[0]!.value.process.pid}`,
      );
      expect((await lockOf(dir)).pid).toBe(won[0]!.value.process.pid);
      dead = won[0]!.value;
    }
  });

  it('takes over a lock whose pid now belongs to another process, and one naming a live process no record of yours names', async () => {
    const dir = await project();
    const first = await startDaemon(dir);
    const real = await lockOf(dir);
    await first.kill9();
    // A lock naming a live pid, but with the dead daemon's start tick: the pid was reused.
    const stranger = spawn('sleep', ['60']);
    try {
      const procStart = (await readFile(`/proc/${stranger.pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')[19];
      const lock = join(dir, '.pulse', 'daemon.lock');
      await writeFile(lock, JSON.stringify({ ...real, pid: stranger.pid, nonce: 'reused' }));
      const next = await startDaemon(dir);
      daemons.push(next);
      expect((await lockOf(dir)).pid).toBe(next.process.pid);
      await next.kill9();
      // The same pid, started when the lock says, but no daemon record of this user's names it: a
      // planted lock, taken over (after the grace a starting daemon has to write its record).
      await writeFile(
        lock,
        JSON.stringify({ ...real, pid: stranger.pid, proc_start: procStart, nonce: 'alive' }),
      );
      const after = await startDaemon(dir);
      daemons.push(after);
      expect((await lockOf(dir)).pid).toBe(after.process.pid);
      expect(after.output()).toContain(`named pid ${stranger.pid}, which is not a pulse daemon of yours`);
      expect(stranger.exitCode).toBeNull();
    } finally {
      stranger.kill('SIGKILL');
    }
  });
});
