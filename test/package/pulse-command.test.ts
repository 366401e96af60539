import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inPackageCache, installOf, pulseCommand } from '../../src/package/pulse-command.js';
import { removeProject, tempProject } from '../support/daemon.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeProject));
});

/** An install of pulse laid out as npm leaves it: `<root>/dist/bundle/bin.cjs` and `pulse.mjs`. */
const install = async () => {
  const root = await tempProject('pulse-install-');
  dirs.push(root);
  await mkdir(join(root, 'dist', 'bundle'), { recursive: true });
  for (const file of ['bin.cjs', 'pulse.mjs'])
    await writeFile(join(root, 'dist', 'bundle', file), '', { mode: 0o755 });
  return root;
};

describe('the pulse command every hint names', () => {
  it('is `pulse` when the pulse on PATH is this install (npm install -g links its bin there)', async () => {
    const root = await install();
    const bin = join(root, 'bin');
    await mkdir(bin);
    await symlink(join(root, 'dist', 'bundle', 'bin.cjs'), join(bin, 'pulse'));
    const script = join(root, 'dist', 'bundle', 'pulse.mjs');
    expect(pulseCommand({ script, env: { PATH: bin } })).toBe('pulse');
    // Another pulse on PATH is not this one: its hints would run a different version.
    const other = await install();
    expect(pulseCommand({ script: join(other, 'dist', 'bundle', 'pulse.mjs'), env: { PATH: bin } })).toBe(
      `node ${join(other, 'dist', 'bundle', 'pulse.mjs')}`,
    );
  });

  it('is `npx pulse-agent` when pulse runs from npx', () => {
    const script = join(
      homedir(),
      '.npm',
      '_npx',
      'a1b2',
      'node_modules',
      'pulse-agent',
      'dist',
      'bundle',
      'bin.cjs',
    );
    expect(pulseCommand({ script, env: { PATH: '' } })).toBe('npx pulse-agent');
  });

  it("is `npm run pulse --` under the clone's own npm scripts, but not where the hint is read elsewhere", async () => {
    const script = join(await install(), 'dist', 'bundle', 'pulse.mjs');
    const env = { PATH: '', npm_package_name: 'pulse-agent', npm_lifecycle_event: 'start' };
    expect(pulseCommand({ script, env })).toBe('npm run pulse --');
    expect(pulseCommand({ script, env, anywhere: true })).toBe(`node ${script}`);
  });

  it('is `pulse` in a process that is not pulse itself, such as a test runner importing it', () => {
    expect(pulseCommand({ script: '/repo/node_modules/vitest/vitest.mjs', env: { PATH: '' } })).toBe('pulse');
  });

  it('quotes a script path a shell would split', () => {
    expect(pulseCommand({ script: '/my tools/pulse/dist/bundle/pulse.mjs', env: { PATH: '' } })).toBe(
      'node "/my tools/pulse/dist/bundle/pulse.mjs"',
    );
  });
});

describe('where a pulse install is', () => {
  it('is the folder holding dist/, from the bundle or from tsc’s output', () => {
    for (const entry of [
      'dist/bundle/bin.cjs',
      'dist/bundle/pulse.mjs',
      'dist/src/bin.cjs',
      'dist/src/cli.js',
    ])
      expect(installOf(`/opt/pulse/${entry}`)).toBe('/opt/pulse');
  });

  it("counts npx's and pnpm's caches as places that may be cleaned, and a clone or a global install as not", () => {
    expect(inPackageCache(join(homedir(), '.npm', '_npx', 'x', 'node_modules', 'pulse-agent'))).toBe(true);
    expect(inPackageCache('/home/me/.local/share/pnpm/dlx/abc/node_modules/pulse-agent')).toBe(true);
    expect(inPackageCache('/usr/local/lib/node_modules/pulse-agent')).toBe(false);
    expect(inPackageCache('/home/me/src/pulse')).toBe(false);
  });
});
