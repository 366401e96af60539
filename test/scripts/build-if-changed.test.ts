import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const script = resolve('scripts/build-if-changed.mjs');
const SOURCES = ['src/cli.ts', 'machines/replan.ts', 'scripts/bundle.ts', 'package.json'];
const OUTPUTS = ['dist/bundle/bin.cjs', 'dist/bundle/pulse.mjs', 'dist/bundle/pulse-main.js'];
const BUILT = new Date('2026-01-01T12:00:00Z');
const BEFORE = new Date('2026-01-01T11:00:00Z');
const AFTER = new Date('2026-01-01T13:00:00Z');
let root: string;

const put = async (file: string, time: Date) => {
  const path = join(root, file);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, '');
  await utimes(path, time, time);
};
/** Sets every folder's time too, as a checkout long ago would leave them. */
const ageFolders = async (time: Date) => {
  for (const folder of ['src', 'machines', 'scripts', 'dist', 'dist/bundle'])
    await utimes(join(root, folder), time, time);
};
const decide = () => spawnSync('node', [script, '--dry-run', root], { encoding: 'utf8' }).stdout.trim();

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'pulse-build-if-'));
  for (const file of SOURCES) await put(file, BEFORE);
  for (const file of OUTPUTS) await put(file, BUILT);
  await ageFolders(BEFORE);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('building only when a source changed', () => {
  it('skips the build when the bundle is newer than every source', () => {
    expect(decide()).toBe('up to date');
  });

  it('builds when a source file changed after the bundle', async () => {
    await utimes(join(root, 'machines/replan.ts'), AFTER, AFTER);
    expect(decide()).toBe('build: machines/replan.ts changed after dist/bundle was built');
  });

  it('builds when package.json changed after the bundle', async () => {
    await utimes(join(root, 'package.json'), AFTER, AFTER);
    expect(decide()).toBe('build: package.json changed after dist/bundle was built');
  });

  it('builds when a source file was removed (its folder changed)', async () => {
    await rm(join(root, 'src/cli.ts'));
    expect(decide()).toMatch(/^build: src changed after dist\/bundle was built$/);
  });

  it('builds when one of the bundle files is missing', async () => {
    await rm(join(root, 'dist/bundle/pulse-main.js'));
    expect(decide()).toBe('build: dist/bundle/pulse-main.js is missing');
  });
});
