import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { startReadyChild } from '../lib/child-process.js';
import { startDaemon } from '../lib/daemon.js';
import { connectSession, shouldInterrupt } from '../lib/session.js';

/**
 * The floor's start-up: call-cost's floor server (the bare v2 SDK and Hono with one tool of
 * `pulse_should_interrupt`'s shape) bundled and started as pulse's package is, one script compiled
 * with V8's code cache, so pulse's start can be set against the least this stack costs as well as
 * against `node -e 0`.
 */

/** The floor server tsc wrote beside the bench, in dist/bench/call-cost/. */
const FLOOR_SERVER = fileURLToPath(new URL('../call-cost/floor-server.js', import.meta.url));

/**
 * pulse's loader in small (scripts/bundle-loader.ts): compiles the bundle with the code cache
 * beside it, and writes one as it stops when there was none, so the cache holds the code a first
 * call ran, as pulse's does.
 */
const LOADER = `const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { join } = require('node:path');
const { Script } = require('node:vm');
const MAIN = join(__dirname, 'floor-main.js');
const CACHE = join(__dirname, 'floor-main.v8-cache');
const cachedData = existsSync(CACHE) ? readFileSync(CACHE) : undefined;
const script = new Script(readFileSync(MAIN, 'latin1'), { filename: MAIN, cachedData });
if (cachedData === undefined || script.cachedDataRejected)
  process.once('SIGTERM', () => {
    writeFileSync(CACHE, script.createCachedData());
    process.exit(0);
  });
const module_ = { exports: {} };
script.runInThisContext()(module_.exports, createRequire(MAIN), module_, MAIN, __dirname);
`;

/** Bundles the floor into `dir` with the options scripts/bundle.ts gives pulse-main.js; returns its loader. */
export const buildFloor = async (dir: string): Promise<string> => {
  await mkdir(dir, { recursive: true });
  await build({
    entryPoints: [FLOOR_SERVER],
    outfile: join(dir, 'floor-main.js'),
    bundle: true,
    platform: 'node',
    target: 'node20.19',
    format: 'cjs',
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    logLevel: 'warning',
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': 'floorImportMetaUrl' },
    banner: {
      js: "(function (exports, require, module, __filename, __dirname) {'use strict'; const floorImportMetaUrl = require('node:url').pathToFileURL(__filename).href;",
    },
    footer: { js: '})' },
    alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
  });
  const loader = join(dir, 'floor.cjs');
  await writeFile(loader, LOADER);
  return loader;
};

/** How long the floor may take to print its origin. */
const START_LIMIT_MS = 60_000;

/**
 * Spawns the bundled floor answering `answerPath`, times spawn → a new session client's
 * `pulse_should_interrupt` answered (as `measureStartup` times pulse), then stops it.
 */
export const measureFloorStartup = async (loader: string, answerPath: string): Promise<number> => {
  const floor = await startReadyChild('bundled floor server', [loader, answerPath], {
    ready: /FLOOR (\S+)/,
    limitMs: START_LIMIT_MS,
  });
  try {
    const client = await connectSession(`${floor.announced}/mcp`);
    try {
      await shouldInterrupt(client, null);
      return performance.now() - floor.spawnedAt;
    } finally {
      await client.close();
    }
  } finally {
    await floor.stop();
  }
};

/** The bundled daemon's answer on `project`, written to `path` for the floor to send back (same bytes). */
export const captureFloorAnswer = async (project: string, path: string): Promise<string> => {
  const daemon = await startDaemon(project);
  try {
    const client = await connectSession(daemon.url);
    try {
      await writeFile(path, JSON.stringify(await shouldInterrupt(client, null)));
      return path;
    } finally {
      await client.close();
    }
  } finally {
    await daemon.stop();
  }
};
