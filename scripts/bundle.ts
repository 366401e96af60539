/**
 * `npm run build`'s second step: bundles tsc's output (dist/src) into what the package ships,
 * dist/bundle/: `pulse-main.js` (the CLI and the daemon, every dependency inside, one function),
 * `bin.cjs` (the `pulse` bin: answers `pulse hook` itself, runs pulse-main.js for the rest through
 * scripts/bundle-loader.ts, with V8's code cache), `pulse.mjs` (the same bin for
 * `node dist/bundle/pulse.mjs`), the WASM the shell classifier loads, and the licences of the
 * bundled packages.
 * Run: `node dist/scripts/bundle.js`.
 */
import { createHash } from 'node:crypto';
import { chmod, copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OUT = join(ROOT, 'dist/bundle');
const require = createRequire(join(ROOT, 'package.json'));

/** Beside the bundle, where `src/hooks/bash-syntax.ts` and web-tree-sitter look for them first. */
const WASM = ['web-tree-sitter/web-tree-sitter.wasm', 'tree-sitter-bash/tree-sitter-bash.wasm'];

/**
 * zod's `z.locales` holds every language's error messages (300 KB of the bundle) and nothing
 * here reads it; English, the default, is imported by zod's schemas on its own. Every start
 * parses what the bundle holds, so the namespace keeps English only.
 */
const englishOnlyZodLocales: Plugin = {
  name: 'english-only-zod-locales',
  setup(bundle) {
    bundle.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, ({ importer, resolveDir }) =>
      /[\\/]zod[\\/]v4[\\/]/.test(importer)
        ? { path: 'zod-locales', namespace: 'english-only', pluginData: resolveDir }
        : undefined,
    );
    bundle.onLoad({ filter: /.*/, namespace: 'english-only' }, ({ pluginData }) => ({
      contents: "export { default as en } from '../locales/en.js';",
      resolveDir: pluginData as string,
    }));
  },
};

/**
 * web-tree-sitter's CommonJS build: its ES one declares its own `require` (from `import("module")`),
 * which shadows the one pulse-main.js's import()s of Node's modules become.
 */
const webTreeSitterCommonJs: Plugin = {
  name: 'web-tree-sitter-commonjs',
  setup(bundle) {
    bundle.onResolve({ filter: /^web-tree-sitter$/ }, () => ({ path: require.resolve('web-tree-sitter') }));
  },
};

/** bin.cjs imports `./cli.js` next to it in dist/src; in the bundle, the loader runs pulse-main.js. */
const cliIsTheLoader: Plugin = {
  name: 'cli-is-the-loader',
  setup(bundle) {
    bundle.onResolve({ filter: /^\.\/cli\.js$/ }, () => ({
      path: join(ROOT, 'dist/scripts/bundle-loader.js'),
    }));
  },
};

/**
 * Non-ASCII characters esbuild leaves (in tagged templates, whose raw text it keeps) as \u escapes:
 * an ASCII file is read into a one-byte string, where one such character makes every character of
 * 1.9 MB take two bytes. The tags pulse uses (hono's `html`) read the cooked text, which is the same.
 */
const asciiOnly = (code: string): string =>
  code.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

const COMMON = {
  bundle: true,
  platform: 'node',
  target: 'node20.19',
  // Whitespace and syntax only: identifiers stay as written, for readable stack traces. Measured
  // at the endpoint with no sources: 66.8 MB whitespace only, 65.6 MB with syntax, 65.9 MB renamed.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
} as const;

/**
 * A script, not an ES module: Node 20 compiles only scripts with a code cache. The file is one
 * function expression taking CommonJS's arguments, which the loader compiles and calls.
 */
const bundlePulse = () =>
  build({
    ...COMMON,
    entryPoints: [join(ROOT, 'dist/src/cli.js')],
    outfile: join(OUT, 'pulse-main.js'),
    format: 'cjs',
    // import() as require(): Node 20 loses a script's dynamic import callback once it comes from
    // the code cache ("A dynamic import callback was not specified"); web-tree-sitter imports
    // Node's modules so.
    supported: { 'dynamic-import': false },
    // ws's optional native speed-ups: it runs without them.
    external: ['bufferutil', 'utf-8-validate'],
    // The code was written as ES modules: strict, and import.meta.url is this file's.
    define: { 'import.meta.url': 'pulseImportMetaUrl' },
    banner: {
      js: "(function (exports, require, module, __filename, __dirname) {'use strict'; const pulseImportMetaUrl = require('node:url').pathToFileURL(__filename).href;",
    },
    footer: { js: '})' },
    plugins: [englishOnlyZodLocales, webTreeSitterCommonJs],
    // Its "main" is a UMD build whose require()s a bundler cannot follow; "module" is plain ESM.
    alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
  });

/** The bin, with the loader inside; `mainHash` names the code caches made for this pulse-main.js. */
const bundleBin = (mainHash: string) =>
  build({
    ...COMMON,
    entryPoints: [join(ROOT, 'dist/src/bin.cjs')],
    outfile: join(OUT, 'bin.cjs'),
    format: 'cjs',
    define: { PULSE_MAIN_HASH: JSON.stringify(mainHash) },
    plugins: [cliIsTheLoader],
  });

const LICENSE_FILE = /^licen[cs]e(\.(md|txt))?$/i;

/** Every package with code in the bundle, and the folder it came from. */
const bundledPackages = (metafiles: Metafile[]): Map<string, string> => {
  const packages = new Map<string, string>();
  const inputs = metafiles.flatMap((metafile) => Object.keys(metafile.inputs));
  for (const input of [...inputs, ...WASM.map((file) => `node_modules/${file}`)]) {
    const match = /^(.*node_modules\/((?:@[^/]+\/)?[^/]+))\//.exec(input);
    if (match) packages.set(match[2]!, join(ROOT, match[1]!));
  }
  return packages;
};

/** One notice file with each bundled package's name, version, licence and licence text. */
const licenceNotices = async (packages: Map<string, string>): Promise<string> => {
  const sections: string[] = [];
  for (const [name, dir] of [...packages].sort(([a], [b]) => a.localeCompare(b))) {
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    const file = (await readdir(dir)).find((entry) => LICENSE_FILE.test(entry));
    const text = file
      ? (await readFile(join(dir, file), 'utf8')).trim()
      : `(no licence file; package.json says ${manifest.license})`;
    sections.push(`## ${name} ${manifest.version} (${manifest.license ?? 'see below'})\n\n${text}\n`);
  }
  return `# Third-party software in pulse's bundle\n\npulse's own code is MIT-licensed (LICENSE). dist/bundle/ also holds the following packages, under their licences:\n\n${sections.join('\n')}`;
};

const main = async () => {
  await rm(OUT, { recursive: true, force: true });
  await mkdir(OUT, { recursive: true });
  const pulse = await bundlePulse();
  const imports = Object.values(pulse.metafile.outputs).flatMap((output) => output.imports);
  const dynamic = imports.filter((entry) => entry.kind === 'dynamic-import').map((entry) => entry.path);
  if (dynamic.length > 0) throw new Error(`pulse-main.js must not import(): ${dynamic.join(', ')}`);
  // cli.ts's #! line: pulse-main.js is not run by itself.
  const code = asciiOnly((await readFile(join(OUT, 'pulse-main.js'), 'utf8')).replace(/^#!.*\n/, ''));
  await writeFile(join(OUT, 'pulse-main.js'), code);
  await chmod(join(OUT, 'pulse-main.js'), 0o644);
  const bin = await bundleBin(createHash('sha256').update(code).digest('hex').slice(0, 16));
  await chmod(join(OUT, 'bin.cjs'), 0o755);
  await writeFile(join(OUT, 'pulse.mjs'), "#!/usr/bin/env node\nimport './bin.cjs';\n", { mode: 0o755 });
  for (const file of WASM) await copyFile(require.resolve(file), join(OUT, file.split('/').pop()!));
  const packages = bundledPackages([pulse.metafile, bin.metafile]);
  await writeFile(join(OUT, 'THIRD_PARTY_LICENSES.md'), await licenceNotices(packages));
  // On stderr: `npm run pulse -- status --json` builds first, and its stdout must stay the JSON.
  console.error(
    `Bundled ${relative(ROOT, OUT)}/: pulse-main.js ${(code.length / 1024).toFixed(0)} KB from ${packages.size} packages; bin.cjs; pulse.mjs; ${WASM.length} WASM files.`,
  );
};

await main();
