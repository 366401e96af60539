/**
 * What the bundle's `pulse` bin runs for every command but `pulse hook` (scripts/bundle.ts puts it
 * where bin.cts imports `./cli.js`): pulse-main.js, the CLI and the daemon as one function,
 * compiled with V8's code cache. Node 20 gives an ES module no code cache, so the bundle is a
 * script; its cache skips parsing 1.9 MB and compiling the functions a start runs, a quarter of
 * the daemon's CPU time to its first answer (docs/benchmarks.md, "Package").
 *
 * The daemon makes the cache (see src/package/code-warm.ts), beside the bundle or, where the install is
 * read-only, in the user's cache folder. A cache that is missing, unreadable or refused by V8
 * (another Node, other flags) only means a slower start, and the next daemon writes a new one.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { CODE_WARM_EVENT } from '../src/package/code-warm.js';

/**
 * pulse-main.js's content hash, set by scripts/bundle.ts. V8 checks a cache against the source's
 * length only, so the name keeps a cache made for other code from ever being read.
 */
declare const PULSE_MAIN_HASH: string;

const MAIN = join(__dirname, 'pulse-main.js');
const CACHE_PREFIX = 'pulse-main-';
const CACHE_SUFFIX = '.v8-cache';
const CACHE = `${CACHE_PREFIX}${PULSE_MAIN_HASH}-${process.version}-${process.arch}${CACHE_SUFFIX}`;
const FOLDERS = [__dirname, join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'pulse-agent')];

const readCache = (): Buffer | undefined => {
  for (const folder of FOLDERS) {
    try {
      return readFileSync(join(folder, CACHE));
    } catch {}
  }
  return undefined;
};

/** Written whole (a rename), where it can be; caches of other builds in that folder go. */
const writeCache = (data: Buffer): void => {
  for (const folder of FOLDERS) {
    const partial = join(folder, `${CACHE}.${process.pid}`);
    try {
      mkdirSync(folder, { recursive: true });
      writeFileSync(partial, data);
      renameSync(partial, join(folder, CACHE));
      for (const name of readdirSync(folder)) {
        const stale = name.startsWith(CACHE_PREFIX) && name.endsWith(CACHE_SUFFIX);
        if (stale && !name.startsWith(`${CACHE_PREFIX}${PULSE_MAIN_HASH}-`)) rmSync(join(folder, name));
      }
      return;
    } catch {
      rmSync(partial, { force: true });
    }
  }
};

type Main = (
  exports: object,
  require: NodeJS.Require,
  module: { exports: object },
  filename: string,
  dirname: string,
) => void;

const compile = (): Main => {
  const cachedData = readCache();
  // ASCII only (scripts/bundle.ts checks), so latin1 reads it into a one-byte string, as is.
  // With no dynamic import callback: a script from the code cache would lose it (scripts/bundle.ts).
  const script = new Script(readFileSync(MAIN, 'latin1'), { filename: MAIN, cachedData });
  if (cachedData === undefined || script.cachedDataRejected)
    (process as NodeJS.EventEmitter).once(CODE_WARM_EVENT, () => writeCache(script.createCachedData()));
  return script.runInThisContext();
};

const module = { exports: {} };
compile()(module.exports, createRequire(MAIN), module, MAIN, __dirname);
