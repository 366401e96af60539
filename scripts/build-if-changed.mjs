#!/usr/bin/env node
// `npm run pulse` and `npm start` build first only when a source is newer than the bundle, so a
// second `npm run pulse -- status` starts at once instead of after a seven-second build.
// Usage: node scripts/build-if-changed.mjs [--dry-run] [root]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the bundle is built from: a change to any of them (a file added, changed or removed) rebuilds. */
const SOURCES = ['src', 'machines', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.build.json'];
/** What the build writes last; the oldest of them is when the bundle was built. */
const OUTPUTS = ['dist/bundle/bin.cjs', 'dist/bundle/pulse.mjs', 'dist/bundle/pulse-main.js'];

const mtimeOf = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
};

/** The newest file or folder under `path` (a folder's time changes when an entry is removed), or null. */
const newestUnder = (path) => {
  const time = mtimeOf(path);
  if (time === null) return null;
  let newest = { path, time };
  if (!statSync(path).isDirectory()) return newest;
  for (const entry of readdirSync(path)) {
    const found = newestUnder(join(path, entry));
    if (found !== null && found.time > newest.time) newest = found;
  }
  return newest;
};

/** Why the bundle under `root` must be built, or null when it is newer than every source. */
export const buildReason = (root) => {
  const built = OUTPUTS.map((file) => mtimeOf(join(root, file)));
  const missing = OUTPUTS.find((_, i) => built[i] === null);
  if (missing !== undefined) return `${missing} is missing`;
  const bundleTime = Math.min(...built);
  for (const source of SOURCES) {
    const newest = newestUnder(join(root, source));
    if (newest !== null && newest.time > bundleTime)
      return `${relative(root, newest.path)} changed after dist/bundle was built`;
  }
  return null;
};

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const dryRun = args.includes('--dry-run');
  const root = resolve(args.find((arg) => arg !== '--dry-run') ?? '.');
  const reason = buildReason(root);
  if (dryRun) console.log(reason === null ? 'up to date' : `build: ${reason}`);
  else if (reason !== null) {
    console.error(`pulse: building, since ${reason}`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const run = spawnSync(npm, ['run', 'build', '--silent'], {
      cwd: root,
      stdio: 'inherit',
      shell: process.platform === 'win32',
    });
    process.exit(run.status ?? 1);
  }
}
