// Builds src/setup/opencode-plugin.generated.ts (not committed; tsc compiles it with the rest):
// pulse's opencode plugin (src/setup/opencode-plugin/plugin.ts) compiled to one JavaScript module
// as a string, which `pulse setup opencode` writes into a project below its `const PULSE = {…}`.
// Run by `npm run build` and `npm run typecheck` and before the tests.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const setup = new URL('../src/setup/', import.meta.url);
const out = new URL('opencode-plugin.generated.ts', setup);

const bundle = await build({
  entryPoints: [fileURLToPath(new URL('opencode-plugin/plugin.ts', setup))],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  charset: 'utf8',
  legalComments: 'none',
  write: false,
  logLevel: 'warning',
});
const body = bundle.outputFiles[0].text;
// opencode loads every export as a plugin and refuses the file for one that is not a function;
// an import would need packages the project may not have.
if (/^import\b/m.test(body) || (body.match(/^export\b/gm) ?? []).length !== 1)
  throw new Error('opencode plugin: the compiled module must import nothing and export one plugin');

const text = [
  '// Written by scripts/build-opencode-plugin.mjs from opencode-plugin/plugin.ts: edit that, not this file.',
  '',
  "/** pulse's opencode plugin, compiled: the module `pulse setup opencode` writes below its `const PULSE = {…}`. */",
  `export const PLUGIN_BODY = ${JSON.stringify(body)};`,
  '',
].join('\n');
const before = await readFile(out, 'utf8').catch(() => null);
if (before !== text) await writeFile(out, text);
