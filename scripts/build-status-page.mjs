// Builds the status page's browser script (src/http/status-page/client/, bundled by esbuild)
// and its style into src/http/status-page/assets.generated.ts, one module of two strings that
// tsc compiles with the rest: the page is inlined whole, so its CSP hashes are of these texts.
// Run by `npm run build` and `npm run typecheck` and before the tests; the output is not committed.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build, transform } from 'esbuild';

const page = new URL('../src/http/status-page/', import.meta.url);
const out = new URL('assets.generated.ts', page);

const bundle = await build({
  entryPoints: [fileURLToPath(new URL('client/main.ts', page))],
  bundle: true,
  format: 'iife',
  target: 'es2022',
  charset: 'utf8',
  legalComments: 'none',
  write: false,
  logLevel: 'warning',
});
const script = bundle.outputFiles[0].text;
const style = (
  await transform(await readFile(new URL('style.css', page), 'utf8'), { loader: 'css', minify: true })
).code;
// Inlined in <script> and <style>: a closing tag inside would end them early.
if (/<\/script/i.test(script) || /<\/style/i.test(style))
  throw new Error('status page: a closing tag in the inlined code');

const text = [
  '// Written by scripts/build-status-page.mjs from client/ and style.css: edit those, not this file.',
  `export const SCRIPT = ${JSON.stringify(script)};`,
  `export const STYLE = ${JSON.stringify(style)};`,
  '',
].join('\n');
const before = await readFile(out, 'utf8').catch(() => null);
if (before !== text) await writeFile(out, text);
