import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backUp } from '../../src/setup/apply.js';
import { removeProject, tempProject } from '../helpers/daemon.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeProject));
});

describe('the backup before a change', () => {
  it('keeps the first backup (the file before pulse) and gives later ones the time', async () => {
    const dir = await tempProject('pulse-backup-');
    dirs.push(dir);
    const file = join(dir, 'CLAUDE.md');
    await writeFile(file, 'before pulse\n');
    expect(await backUp(file)).toBe(`${file}.pulse-backup`);
    await writeFile(file, 'after a first run\n');
    const now = new Date('2026-01-02T03:04:05.678Z');
    expect(await backUp(file, now)).toBe(`${file}.pulse-backup-2026-01-02T03-04-05-678Z`);
    expect(await backUp(file, now)).toBe(`${file}.pulse-backup-2026-01-02T03-04-05-678Z-2`);
    expect(await readFile(`${file}.pulse-backup`, 'utf8')).toBe('before pulse\n');
    expect(await readFile(`${file}.pulse-backup-2026-01-02T03-04-05-678Z`, 'utf8')).toBe(
      'after a first run\n',
    );
  });
});
