import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replaceFile, replacementsSettled } from '../../src/store/replace-file.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pulse-replace-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('replacing a file while the process shuts down', () => {
  it('waits for every replacement under way, one started meanwhile included', async () => {
    const first = join(dir, 'state.json');
    const second = join(dir, 'inbox.jsonl');
    void replaceFile(first, '{"a":1}\n').then(() => replaceFile(second, 'row\n'));
    await replacementsSettled();
    expect(await readFile(first, 'utf8')).toBe('{"a":1}\n');
    await replacementsSettled();
    expect(await readFile(second, 'utf8')).toBe('row\n');
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('resolves at once when nothing is being written', async () => {
    await expect(replacementsSettled()).resolves.toBeUndefined();
  });

  it('removes the temp file of a write the process exits in the middle of', () => {
    // The built module (the suite builds first), in a child that exits before the write's rename.
    const module = pathToFileURL(join(process.cwd(), 'dist/src/store/replace-file.js')).href;
    const target = JSON.stringify(join(dir, 'state.json'));
    // Exits the moment the temp file shows, while 32 MB are still being written and synced.
    const script = `import { readdirSync } from 'node:fs';
      import { replaceFile } from ${JSON.stringify(module)};
      void replaceFile(${target}, 'x'.repeat(32 << 20));
      const look = () => {
        if (readdirSync(${JSON.stringify(dir)}).some((name) => name.endsWith('.tmp'))) process.exit(0);
        if (readdirSync(${JSON.stringify(dir)}).includes('state.json')) process.exit(3);
        setImmediate(look);
      };
      look();`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    return readdir(dir).then((names) => expect(names.filter((name) => name.endsWith('.tmp'))).toEqual([]));
  });
});
