/**
 * Run in a fresh process as `node --expose-gc dist/bench/idle/import-cost.js SPECIFIER…`: imports each
 * module in turn and prints one JSON line with the memory each added (after a full GC, so only
 * what the module keeps counts), the process's memory before the first one included. What the
 * idle section's memory profile is made of.
 */
import { pathToFileURL } from 'node:url';

export interface ImportCost {
  module: string;
  /** Bytes of RSS and of V8 heap used that the import added. */
  rss: number;
  heapUsed: number;
}

export interface ImportCosts {
  /** The process before any import: Node itself. */
  base: { rss: number; heapUsed: number };
  modules: ImportCost[];
}

const measure = () => {
  globalThis.gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
};

const main = async () => {
  const base = measure();
  let previous = base;
  const modules: ImportCost[] = [];
  for (const specifier of process.argv.slice(2)) {
    await import(specifier.startsWith('/') ? pathToFileURL(specifier).href : specifier);
    const now = measure();
    modules.push({
      module: specifier,
      rss: now.rss - previous.rss,
      heapUsed: now.heapUsed - previous.heapUsed,
    });
    previous = now;
  }
  const costs: ImportCosts = { base, modules };
  console.log(JSON.stringify(costs));
};

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
