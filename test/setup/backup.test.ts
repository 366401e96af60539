import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backUp } from '../../src/setup/apply.js';
import { removeProject, tempProject } from '../support/daemon.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeProject));
});

const project = async () => {
  const dir = await tempProject('pulse-backup-');
  dirs.push(dir);
  return dir;
};

describe('the backup before a change', () => {
  it('keeps the first backup (the file before pulse) and gives later ones the time', async () => {
    const dir = await project();
    await writeFile(join(dir, 'CLAUDE.md'), 'before pulse\n');
    const first = join(dir, '.pulse', 'backups', 'CLAUDE.md.pulse-backup');
    expect(await backUp(dir, 'CLAUDE.md')).toBe(first);
    await writeFile(join(dir, 'CLAUDE.md'), 'after a first run\n');
    const now = new Date('2026-01-02T03:04:05.678Z');
    expect(await backUp(dir, 'CLAUDE.md', now)).toBe(`${first}-2026-01-02T03-04-05-678Z`);
    expect(await backUp(dir, 'CLAUDE.md', now)).toBe(`${first}-2026-01-02T03-04-05-678Z-2`);
    expect(await readFile(first, 'utf8')).toBe('before pulse\n');
    expect(await readFile(`${first}-2026-01-02T03-04-05-678Z`, 'utf8')).toBe('after a first run\n');
  });

  it('keeps backups out of the project root and out of git, in the folder layout of the file', async () => {
    const dir = await project();
    execFileSync('git', ['init', '-q', dir]);
    await mkdir(join(dir, '.claude'));
    await writeFile(join(dir, '.claude', 'settings.local.json'), '{}\n');
    await writeFile(join(dir, '.mcp.json'), '{}\n');
    const before = await readdir(dir);
    const backups = [await backUp(dir, '.claude/settings.local.json'), await backUp(dir, '.mcp.json')];
    expect(backups).toEqual([
      join(dir, '.pulse', 'backups', '.claude', 'settings.local.json.pulse-backup'),
      join(dir, '.pulse', 'backups', '.mcp.json.pulse-backup'),
    ]);
    expect((await readdir(dir)).filter((name) => !before.includes(name))).toEqual(['.pulse']);
    const untracked = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=all'], {
      encoding: 'utf8',
    });
    expect(untracked).not.toContain('pulse-backup');
  });

  it('writes beside the file when .pulse/ is a symlink, which pulse never writes through', async () => {
    const dir = await project();
    const elsewhere = await project();
    await symlink(elsewhere, join(dir, '.pulse'));
    await writeFile(join(dir, 'AGENTS.md'), 'mine\n');
    expect(await backUp(dir, 'AGENTS.md')).toBe(join(dir, 'AGENTS.md.pulse-backup'));
    expect(await readdir(elsewhere)).toEqual([]);
  });
});
