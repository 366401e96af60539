import { execFile } from 'node:child_process';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What `npm pack` made of the package. */
export interface PackedTarball {
  file: string;
  bytes: number;
  unpackedBytes: number;
  files: string[];
}

/** One `npm install -g --prefix <fresh> <tarball>`. */
export interface InstallRun {
  ms: number;
  /** `npm warn` lines it printed (install scripts, engines, …). */
  warnings: string[];
  /** Bytes of everything it installed under the prefix. */
  installedBytes: number;
}

/** `npm pack` of the package in `root` as the build left it (no prepack: the caller built dist/), into `dir`. */
export const pack = async (dir: string, root: string): Promise<PackedTarball> => {
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
    cwd: root,
  });
  const [packed] = JSON.parse(stdout) as Array<{
    filename: string;
    size: number;
    unpackedSize: number;
    files: Array<{ path: string }>;
  }>;
  return {
    file: join(dir, packed!.filename),
    bytes: packed!.size,
    unpackedBytes: packed!.unpackedSize,
    files: packed!.files.map((file) => file.path),
  };
};

const folderBytes = async (dir: string): Promise<number> => {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
};

/** Installs the tarball into a fresh prefix, offline: a package with no dependencies needs no registry. */
export const install = async (tarball: string, prefix: string): Promise<InstallRun> => {
  await mkdir(prefix);
  const started = performance.now();
  const { stderr } = await run('npm', [
    'install',
    '--global',
    '--prefix',
    prefix,
    '--offline',
    '--no-audit',
    '--no-fund',
    tarball,
  ]);
  const ms = performance.now() - started;
  return {
    ms,
    warnings: stderr.split('\n').filter((line) => /^npm warn/i.test(line)),
    installedBytes: await folderBytes(join(prefix, 'lib', 'node_modules', 'pulse-agent')),
  };
};
