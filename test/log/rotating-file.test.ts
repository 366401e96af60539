import { access, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { LOG_ROTATION, openRotatingFile, rotatedPath } from '../../src/log/rotating-file.js';
import { removeProject, tempProject } from '../support/daemon.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeProject));
});

const logDir = async () => {
  const dir = await tempProject('pulse-log-');
  dirs.push(dir);
  return dir;
};

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

const linesOf = async (path: string) =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { msg: string; n: number });

const quiet = { write: () => true };

describe('the log file rotation', () => {
  it('is 5 MB a file with two rotated files kept beside the live one', () => {
    expect(LOG_ROTATION).toEqual({ maxBytes: 5 * 1024 * 1024, keep: 2 });
    expect(rotatedPath('/p/.pulse/pulse.log', 1)).toBe('/p/.pulse/pulse.1.log');
    expect(rotatedPath('/p/.pulse/pulse.log', 2)).toBe('/p/.pulse/pulse.2.log');
  });

  it('rotates at the size limit, keeps the live name, keeps two rotated files, and drops the oldest', async () => {
    const dir = await logDir();
    const file = join(dir, 'pulse.log');
    const rotation = { maxBytes: 2_000, keep: 2 };
    const { logger, close } = createLogger({ level: 'info', file, rotation, terminal: quiet });
    const written = 200;
    for (let n = 1; n <= written; n++) {
      logger.info({ n }, `line ${n} ${'x'.repeat(40)}`);
      // A rotation closes the old descriptor on the next tick, as it would between real log lines.
      await new Promise((resolve) => setImmediate(resolve));
    }
    close();

    const files = [file, rotatedPath(file, 1), rotatedPath(file, 2)];
    for (const path of files) expect(await exists(path), path).toBe(true);
    expect(await exists(rotatedPath(file, 3))).toBe(false);
    const [live, newer, older] = await Promise.all(files.map(linesOf));
    // Each rotated file stopped at the first write that reached the limit: under it by less than one line.
    const lineBytes = (await stat(rotatedPath(file, 1))).size / newer!.length;
    for (const path of files.slice(1)) {
      const { size } = await stat(path);
      expect(size).toBeGreaterThanOrEqual(rotation.maxBytes);
      expect(size).toBeLessThan(rotation.maxBytes + 2 * lineBytes);
    }
    // Oldest to newest across the files, with no gap: only whole files fell off the end.
    const kept = [...older!, ...newer!, ...live!].map((line) => line.n);
    expect(kept.at(-1)).toBe(written);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => written - kept.length + 1 + i));
    expect(kept.length).toBeLessThan(written);
  });

  it('counts what the live file already holds after a restart', async () => {
    const dir = await logDir();
    const file = join(dir, 'pulse.log');
    await writeFile(file, `${JSON.stringify({ msg: 'from the last run', n: 0 })}\n`.repeat(30));
    const before = (await stat(file)).size;
    const rotation = { maxBytes: before + 100, keep: 2 };
    const { logger, close } = createLogger({ level: 'info', file, rotation, terminal: quiet });
    logger.info({ n: 1 }, 'the first line of this run');
    logger.info({ n: 2 }, 'the second line of this run');
    close();
    expect((await linesOf(rotatedPath(file, 1))).at(-1)?.msg).toBe('the first line of this run');
    expect((await linesOf(file)).map((line) => line.n)).toEqual([2]);
  });

  it('never writes through a symlink: the file is refused and the terminal says so', async () => {
    const dir = await logDir();
    const target = join(dir, 'elsewhere.txt');
    await writeFile(target, 'not a log\n');
    const file = join(dir, 'pulse.log');
    await symlink(target, file);
    expect(() => openRotatingFile(file)).toThrow(/symlink/);

    let terminal = '';
    const logging = createLogger({ level: 'info', file, terminal: { write: (text) => (terminal += text) } });
    logging.logger.info('still logged');
    logging.close();
    expect(logging.file).toBeNull();
    expect(terminal).toMatch(/warning: Cannot write the log file; logging to the terminal only: .*symlink/);
    expect(terminal).toContain('info: still logged');
    expect(await readFile(target, 'utf8')).toBe('not a log\n');
  });
});
