import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { killAllDaemons } from './daemon.js';
import { writeSection } from './doc-section.js';
import { type GeneratedHistory, writeHistory } from './history.js';
import { formatSection, formatTable } from './history-report.js';
import { type HistoryPlan, measureHistorySizes } from './history-size.js';
import { machineInfo } from './machine.js';

/** History sizes, smallest first: the first is the baseline for every ratio. */
const SIZES = [0, 10_000, 100_000];

const PLANS: Record<'full' | 'quick', HistoryPlan> = {
  full: { startups: 7, warmup: 300, rounds: 40, block: 50 },
  quick: { startups: 3, warmup: 100, rounds: 20, block: 25 },
};

const DOC = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));

let tempRoot: string | null = null;

// Whatever ends the run (an error, Ctrl-C), no daemon outlives it and no temp folder stays.
process.once('exit', () => {
  killAllDaemons();
  if (tempRoot) rmSync(tempRoot, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`bench: ${signal}, stopping.`);
    process.exit(130);
  });
}

const log = (line: string) => console.log(`bench: ${line}`);

const main = async () => {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  const plan = values.quick ? PLANS.quick : PLANS.full;
  const command = `npm run bench${values.quick ? ' -- --quick' : ''}`;
  const machine = machineInfo();
  tempRoot = await mkdtemp(join(tmpdir(), 'pulse-bench-'));
  const histories: GeneratedHistory[] = [];
  for (const size of SIZES) {
    const project = join(tempRoot, `history-${size}`);
    await mkdir(project);
    const started = performance.now();
    histories.push(await writeHistory(project, size));
    log(`wrote ${size} events in ${Math.round(performance.now() - started)} ms`);
  }
  const results = await measureHistorySizes(histories, plan, log);
  const report = {
    machine,
    date: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    command,
    plan,
    results,
  };
  console.log(`\n${formatTable(report)}\n`);
  await writeSection(DOC, 'history', formatSection(report));
  log(`rewrote the history section of ${DOC}`);
  await rm(tempRoot, { recursive: true, force: true });
  tempRoot = null;
};

main().then(
  () => process.exit(0),
  (error: unknown) => {
    const usage = String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
    if (usage) console.error(`bench: ${(error as Error).message}\nUsage: npm run bench [-- --quick]`);
    else console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(usage ? 2 : 1);
  },
);
