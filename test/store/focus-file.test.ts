import { access, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FocusFileError, readFocus, writeFocus } from '../../src/store/focus-file.js';
import { removeProject, tempProject } from '../support/daemon.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeProject));
});

const pulseDir = async () => {
  const project = await tempProject('pulse-focus-file-');
  dirs.push(project);
  const dir = join(project, '.pulse');
  await mkdir(dir);
  return dir;
};

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

const NOW = Date.parse('2026-05-01T12:00:00.000Z');

/** The error readFocus rejects with, checked to be a FocusFileError. */
const readError = async (dir: string): Promise<FocusFileError> => {
  const error = await readFocus(dir, NOW).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FocusFileError);
  return error as FocusFileError;
};

describe('the focus file', () => {
  it('reads back the until it wrote, as an ISO time in focus.json', async () => {
    const dir = await pulseDir();
    const until = NOW + 45 * 60_000;
    await writeFocus(dir, until);
    expect(JSON.parse(await readFile(join(dir, 'focus.json'), 'utf8'))).toEqual({
      until: '2026-05-01T12:45:00.000Z',
    });
    expect(await readFocus(dir, NOW)).toEqual({ until });
  });

  it('reads no focus when there is no file', async () => {
    expect(await readFocus(await pulseDir(), NOW)).toEqual({ until: null });
  });

  it('removes the file on off, and off without a file is fine', async () => {
    const dir = await pulseDir();
    await writeFocus(dir, NOW + 60_000);
    await writeFocus(dir, null);
    expect(await exists(join(dir, 'focus.json'))).toBe(false);
    expect(await readFocus(dir, NOW)).toEqual({ until: null });
    await expect(writeFocus(dir, null)).resolves.toBeUndefined();
  });

  it('reads an until in the past, or exactly now, as no focus', async () => {
    const dir = await pulseDir();
    await writeFocus(dir, NOW - 1);
    expect(await readFocus(dir, NOW)).toEqual({ until: null });
    await writeFocus(dir, NOW);
    expect(await readFocus(dir, NOW)).toEqual({ until: null });
    expect(await readFocus(dir, NOW - 1)).toEqual({ until: NOW });
  });

  it('accepts an until with an offset that a user wrote by hand', async () => {
    const dir = await pulseDir();
    await writeFile(join(dir, 'focus.json'), '{"until": "2026-05-01T14:30:00+02:00"}');
    expect(await readFocus(dir, NOW)).toEqual({ until: Date.parse('2026-05-01T12:30:00Z') });
  });

  it('refuses a file that is not JSON, naming the file and how to fix it', async () => {
    const dir = await pulseDir();
    await writeFile(join(dir, 'focus.json'), '{"until": ');
    const error = await readError(dir);
    expect(error.message).toContain(join(dir, 'focus.json'));
    expect(error.message).toContain('is not valid JSON');
    expect(error.message).toContain('pulse focus off');
    expect(error.message).toContain('delete the file');
  });

  it.each([
    ['no until', '{}', 'has no "until"'],
    ['an until that is not a time', '{"until": "tomorrow"}', '"tomorrow"'],
    ['an until without a zone', '{"until": "2026-05-01T14:30:00"}', 'with a zone'],
    ['an until that is a number', '{"until": 1777636800000}', '1777636800000'],
    ['an array', '["2026-05-01T14:30:00Z"]', 'is not a JSON object'],
  ])('refuses %s, saying what is wrong and what it should be', async (_, text, problem) => {
    const dir = await pulseDir();
    await writeFile(join(dir, 'focus.json'), text);
    const error = await readError(dir);
    expect(error.message).toContain(join(dir, 'focus.json'));
    expect(error.message).toContain(problem);
    expect(error.message).toContain('{"until": "<ISO 8601 time>"}');
    expect(error.message).toContain('pulse focus off');
  });

  it('refuses a file over 64 KiB without parsing it', async () => {
    const dir = await pulseDir();
    const huge = `{"until": "2026-05-01T14:30:00Z", "pad": "${'x'.repeat(64 * 1024)}"}`;
    await writeFile(join(dir, 'focus.json'), huge);
    const error = await readError(dir);
    expect(error.message).toContain('more than the limit of 65536 (64 KiB)');
    expect(error.message).toContain('pulse focus off');
  });

  it('never writes through a symlink', async () => {
    const dir = await pulseDir();
    const outside = join(dir, '..', 'elsewhere.json');
    await writeFile(outside, 'mine');
    await symlink(outside, join(dir, 'focus.json'));
    await expect(writeFocus(dir, NOW + 60_000)).rejects.toThrow(/is a symlink/);
    expect(await readFile(outside, 'utf8')).toBe('mine');
  });
});
