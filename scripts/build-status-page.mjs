// Builds the status page's generated modules, which tsc compiles with the rest (neither is committed):
// - machines.generated.ts: each machine's diagram as SVG, laid out by elkjs from the machine
//   definitions (scripts/machine-diagrams.ts), and each state's description. elkjs runs here
//   only: the daemon ships the strings and never loads it.
// - assets.generated.ts: the browser script (client/, bundled by esbuild) and the style, two
//   strings inlined whole into the page, so its CSP hashes are of these texts.
// Run by `npm run build` and `npm run typecheck` and before the tests.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build, transform } from 'esbuild';

const page = new URL('../src/http/status-page/', import.meta.url);
const out = new URL('assets.generated.ts', page);

/** Writes `text` to `file` unless it already holds it, so tsc's incremental build stays warm. */
const writeIfChanged = async (file, text) => {
  const before = await readFile(file, 'utf8').catch(() => null);
  if (before !== text) await writeFile(file, text);
};

const diagramsModule = await build({
  entryPoints: [fileURLToPath(new URL('machine-diagrams.ts', import.meta.url))],
  bundle: true,
  platform: 'node',
  format: 'esm',
  write: false,
  logLevel: 'warning',
});
const { machineDiagrams, stateDescriptions } = await import(
  `data:text/javascript;base64,${Buffer.from(diagramsModule.outputFiles[0].text).toString('base64')}`
);
await writeIfChanged(
  new URL('machines.generated.ts', page),
  [
    '// Written by scripts/build-status-page.mjs from the machine definitions: edit those, not this file.',
    '',
    "/** Each machine's diagram as inline SVG, by the system id of the actor that runs it. */",
    `export const DIAGRAMS = ${JSON.stringify(await machineDiagrams(), null, 1)} as const;`,
    '',
    "/** What each state means, by actor and state path: the machines' own descriptions. */",
    `export const STATE_TEXT = ${JSON.stringify(stateDescriptions(), null, 1)} as const;`,
    '',
  ].join('\n'),
);

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
await writeIfChanged(out, text);
