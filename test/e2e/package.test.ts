import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { install, pack } from '../../harness/npm-package.js';
import { SETUP_AGENTS } from '../../src/setup/agent-names.js';
import { removeProject, tempProject } from '../support/daemon.js';

// The package as npm users get it: the tarball `npm pack` makes of the build this run made,
// installed into a fresh prefix with no registry, and its `pulse` run from there.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
let files: string[] = [];
let installWarnings: string[] = [];
let pulse = '';

beforeAll(async () => {
  const dir = await tempProject('pulse-package-');
  dirs.push(dir);
  // The suite's global setup built dist/: packed as prepack would leave it, installed as npm users do.
  const tarball = await pack(dir, ROOT);
  files = tarball.files;
  const prefix = join(dir, 'prefix');
  installWarnings = (await install(tarball.file, prefix)).warnings;
  pulse = join(prefix, 'bin', 'pulse');
}, 120_000);

afterAll(() => Promise.all(dirs.splice(0).map(removeProject)));

describe('the npm package', () => {
  it('holds the bundle, its WASM and licences, the README and LICENSE, and no source maps', () => {
    expect(files.sort()).toEqual(
      [
        'LICENSE',
        'README.md',
        'package.json',
        'dist/bundle/bin.cjs',
        'dist/bundle/pulse-main.js',
        'dist/bundle/pulse.mjs',
        'dist/bundle/THIRD_PARTY_LICENSES.md',
        'dist/bundle/tree-sitter-bash.wasm',
        'dist/bundle/web-tree-sitter.wasm',
      ].sort(),
    );
  });

  it('declares no dependencies and no install scripts, and says where it comes from', async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    expect(manifest.dependencies ?? {}).toEqual({});
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare'])
      expect(manifest.scripts[script]).toBeUndefined();
    expect(manifest.scripts.prepack).toBe('npm run build');
    expect(manifest).toMatchObject({
      license: 'MIT',
      repository: { type: 'git' },
      bugs: { url: expect.any(String) },
    });
    expect(manifest.homepage).toEqual(expect.any(String));
    expect(await readFile(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
  });

  it('installs from the tarball with no registry and no warning, and its pulse runs', async () => {
    expect(installWarnings).toEqual([]);
    const { stdout } = await run(pulse, ['--version']);
    expect(stdout.trim()).toMatch(/^pulse-agent \d+\.\d+\.\d+$/);
  });

  it('starts in the background from the install, says how to stop it as installed, and stops', async () => {
    const project = await tempProject('pulse-package-project-');
    dirs.push(project);
    // Its own bin folder on PATH, as npm install -g leaves it: hints then say `pulse`.
    const env = { ...process.env, PATH: `${join(pulse, '..')}:${process.env.PATH}` };
    const started = await run(pulse, ['start', '--detach', '-p', project, '--port', '0'], { env });
    expect(started.stdout).toContain(`Stop it with: pulse stop -p ${project}`);
    expect(started.stdout).toContain(`Connect an agent: pulse setup <${SETUP_AGENTS.join('|')}> --write -p `);
    const stopped = await run(pulse, ['stop', '-p', project], { env });
    expect(stopped.stdout).toMatch(/^Stopped pulse \(pid \d+\)/);
  });

  it("leaves its code cache beside the bundle when the daemon stops, starts from it as it is, replaces a damaged one, and keeps it in the user's cache folder when it cannot be written beside", async () => {
    const project = await tempProject('pulse-package-cache-');
    dirs.push(project);
    const bundle = join(pulse, '..', '..', 'lib', 'node_modules', 'pulse-agent', 'dist', 'bundle');
    const caches = async () => (await readdir(bundle)).filter((name) => name.endsWith('.v8-cache'));
    const startAndStop = async () => {
      await run(pulse, ['start', '--detach', '-p', project, '--port', '0']);
      await run(pulse, ['stop', '-p', project]);
    };
    for (const name of await caches()) await rm(join(bundle, name));

    await startAndStop();
    const [name] = await caches();
    expect(await caches()).toEqual([
      expect.stringMatching(
        new RegExp(`^pulse-main-[0-9a-f]{16}-${process.version}-${process.arch}\\.v8-cache$`),
      ),
    ]);
    const made = await readFile(join(bundle, name!));
    expect(made.length).toBeGreaterThan(100_000);

    // V8 took it: a refused cache would have been written again.
    await startAndStop();
    expect(Buffer.compare(await readFile(join(bundle, name!)), made)).toBe(0);

    await writeFile(join(bundle, name!), 'not a code cache');
    expect((await run(pulse, ['--version'])).stdout).toMatch(/^pulse-agent \d+\.\d+\.\d+/);
    await startAndStop();
    expect((await readFile(join(bundle, name!))).length).toBeGreaterThan(100_000);

    // Where nothing can be written beside the bundle (here a folder stands in the cache's place,
    // as root can write anywhere), the cache goes to the user's cache folder.
    await rm(join(bundle, name!));
    await mkdir(join(bundle, name!, 'in the way'), { recursive: true });
    const userCache = join(project, 'user-cache');
    const env = { ...process.env, XDG_CACHE_HOME: userCache };
    await run(pulse, ['start', '--detach', '-p', project, '--port', '0'], { env });
    await run(pulse, ['stop', '-p', project], { env });
    expect(await readdir(join(userCache, 'pulse-agent'))).toEqual([name]);
    expect((await readFile(join(userCache, 'pulse-agent', name!))).length).toBeGreaterThan(100_000);
    await rm(join(bundle, name!), { recursive: true });
  });
});
