import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI tests run the bundled `pulse` as a user would; build it (tsc, then the bundle) once per run. */
export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  for (const script of [
    ['scripts/build-status-page.mjs'],
    ['scripts/build-opencode-plugin.mjs'],
    ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'],
    ['dist/scripts/bundle.js'],
  ]) {
    execFileSync(process.execPath, script, { cwd: root, stdio: 'inherit' });
  }
}
