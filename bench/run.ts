import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseSimArgs } from '../sim/args.js';
import { writeDeliverySection } from '../sim/doc.js';
import { runExperiment, settingsOf } from '../sim/rows.js';
import { type CallCostPlan, measureCallCost } from './call-cost/measure.js';
import * as callCostReport from './call-cost/report.js';
import { type EditPlan, measureEditToAgent } from './edit-to-agent/measure.js';
import * as editReport from './edit-to-agent/report.js';
import { type HistoryPlan, measureHistorySizes } from './history/measure.js';
import { formatSection, formatTable } from './history/report.js';
import { type HooksPlan, measureHooks } from './hooks/measure.js';
import * as hooksReport from './hooks/report.js';
import { type IdlePlan, measureIdle } from './idle/measure.js';
import * as idleReport from './idle/report.js';
import { killAllChildren } from './lib/child-process.js';
import { writeSection } from './lib/doc-section.js';
import type { RunInfo } from './lib/format.js';
import { type GeneratedHistory, writeHistory } from './lib/generated-history.js';
import { machineInfo } from './lib/machine.js';
import { writeSummary } from './lib/summary.js';
import { measurePackage, type PackagePlan } from './package/measure.js';
import * as packageReport from './package/report.js';
import { measureProjects, type ProjectsPlan } from './projects/measure.js';
import * as projectsReport from './projects/report.js';
import { measureAbandonedSessions, type SessionsPlan } from './sessions/measure.js';
import * as sessionsReport from './sessions/report.js';
import { measureManySources, type SourcesPlan } from './sources/measure.js';
import * as sourcesReport from './sources/report.js';

/** History sizes, smallest first: the first is the baseline for every ratio. */
const SIZES = [0, 10_000, 100_000];

const PLANS: Record<'full' | 'quick', HistoryPlan> = {
  full: { startups: 7, warmup: 300, rounds: 40, block: 50 },
  quick: { startups: 3, warmup: 100, rounds: 20, block: 25 },
};

const FULL_SOURCES: SourcesPlan = {
  sources: 200,
  intervalSec: 1,
  itemsPerSource: 3,
  warmupMs: 5_000,
  windowMs: 60_000,
  probeEveryMs: 250,
};

const SOURCES_PLANS: Record<'full' | 'quick', SourcesPlan> = {
  full: FULL_SOURCES,
  quick: { ...FULL_SOURCES, windowMs: 15_000 },
};

/** A section's plans: the full one, and the quick one as what it changes. */
const plans = <P>(full: P, quick: Partial<P>): Record<'full' | 'quick', P> => ({
  full,
  quick: { ...full, ...quick },
});

const CALL_COST_PLANS = plans<CallCostPlan>(
  { warmup: 200, rounds: 20, block: 50, concurrency: 8 },
  { warmup: 80, rounds: 6, block: 25 },
);
const EDIT_PLANS = plans<EditPlan>(
  { staleRounds: 1_000, pushRounds: 200 },
  { staleRounds: 200, pushRounds: 50 },
);
const IDLE_PLANS = plans<IdlePlan>(
  {
    sources: 10,
    intervalSec: 300,
    reducer: { settleMs: 5_000, limitMs: 150_000 },
    windowMs: 60_000,
  },
  { windowMs: 15_000 },
);
const HOOKS_PLANS = plans<HooksPlan>({ warmup: 5, runs: 100 }, { warmup: 3, runs: 30 });
const PACKAGE_PLANS = plans<PackagePlan>({ installs: 3, startups: 7 }, { installs: 2, startups: 3 });
const PROJECTS_PLANS = plans<ProjectsPlan>(
  { projects: 5, warmup: 100, rounds: 10, block: 40, settleMs: 45_000, windowMs: 30_000 },
  { warmup: 40, rounds: 4, block: 25, windowMs: 10_000 },
);
const SESSIONS_PLANS = plans<SessionsPlan>(
  { sessions: 10_000, idleSec: 90, concurrency: 16 },
  { sessions: 2_000, idleSec: 30 },
);

/** The sections a run can measure, in the order it measures them. */
const SECTIONS = [
  'call-cost',
  'edit-to-agent',
  'history',
  'idle',
  'sources',
  'hooks',
  'sessions',
  'projects',
  'package',
  'delivery',
] as const;
type Section = (typeof SECTIONS)[number];

const DOC = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));

let tempRoot: string | null = null;

// Whatever ends the run (an error, Ctrl-C), no daemon outlives it and no temp folder stays.
process.once('exit', () => {
  killAllChildren();
  if (tempRoot) rmSync(tempRoot, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`bench: ${signal}, stopping.`);
    process.exit(130);
  });
}

const log = (line: string) => console.log(`bench: ${line}`);

const runHistory = async (root: string, run: RunInfo) => {
  const plan = run.quick ? PLANS.quick : PLANS.full;
  const histories: GeneratedHistory[] = [];
  for (const size of SIZES) {
    const project = join(root, `history-${size}`);
    await mkdir(project);
    const started = performance.now();
    histories.push(await writeHistory(project, size));
    log(`wrote ${size} events in ${Math.round(performance.now() - started)} ms`);
  }
  const results = await measureHistorySizes(histories, plan, log);
  const report = { ...run, plan, results };
  console.log(`\n${formatTable(report)}\n`);
  await writeSection(DOC, 'history', formatSection(report));
  log(`rewrote the history section of ${DOC}`);
};

const runSources = async (root: string, run: RunInfo) => {
  const plan = run.quick ? SOURCES_PLANS.quick : SOURCES_PLANS.full;
  const dir = join(root, 'sources');
  await mkdir(dir);
  log(
    `sources: ${plan.sources} sources every ${plan.intervalSec} s on one fixture server, and an idle daemon`,
  );
  const result = await measureManySources(dir, plan, (line) => log(`sources: ${line}`));
  const report = { ...run, result };
  console.log(`\n${sourcesReport.formatTable(report)}\n`);
  if (result.pollers.errors.length > 0) log(`sources: poll errors: ${result.pollers.errors.join(' | ')}`);
  for (const measure of sourcesReport.missedTargets(report)) log(`sources: target missed: ${measure}`);
  await writeSection(DOC, 'sources', sourcesReport.formatSection(report));
  log(`rewrote the sources section of ${DOC}`);
};

/**
 * The delivery experiment (`npm run sim:delivery` with its defaults): the seed's table beside
 * ours, on a simulated clock, so the machine's load does not change it.
 */
const runDelivery = async (_root: string, run: RunInfo) => {
  const options = parseSimArgs([]);
  const started = performance.now();
  const { tables } = await runExperiment(options);
  console.log(`\n${tables.loss}\n\n${tables.latency}\n\n${tables.targets}\n\n${tables.outage}\n`);
  await writeDeliverySection(DOC, { tables, command: run.command, settings: settingsOf(options) });
  log(`delivery: took ${Math.round((performance.now() - started) / 1000)} s; rewrote its section of ${DOC}`);
};

/** What every new section's report module offers. */
interface SectionReport<R> {
  formatTable(report: R): string;
  formatSection(report: R): string;
  missedTargets(report: R): string[];
}

/** Measures one section in a fresh folder, prints its table and rewrites its part of the document. */
const section =
  <P, M, R>(
    name: Section,
    plans: Record<'full' | 'quick', P>,
    measure: (dir: string, plan: P, progress: (line: string) => void) => Promise<M>,
    toReport: (run: RunInfo, plan: P, measured: M) => R,
    report: SectionReport<R>,
  ) =>
  async (root: string, run: RunInfo) => {
    const plan = run.quick ? plans.quick : plans.full;
    const dir = join(root, name);
    await mkdir(dir);
    const started = performance.now();
    const measured = await measure(dir, plan, (line) => log(`${name}: ${line}`));
    const full = toReport(run, plan, measured);
    console.log(`\n${report.formatTable(full)}\n`);
    for (const missed of report.missedTargets(full)) log(`${name}: target missed: ${missed}`);
    await writeSection(DOC, name, report.formatSection(full));
    log(`${name}: took ${Math.round((performance.now() - started) / 1000)} s; rewrote its section of ${DOC}`);
  };

const RUNNERS: Record<Section, (root: string, run: RunInfo) => Promise<void>> = {
  'call-cost': section(
    'call-cost',
    CALL_COST_PLANS,
    measureCallCost,
    (run, plan, cases) => ({ ...run, plan, cases }),
    callCostReport,
  ),
  'edit-to-agent': section(
    'edit-to-agent',
    EDIT_PLANS,
    measureEditToAgent,
    (run, plan, result) => ({ ...run, plan, result }),
    editReport,
  ),
  history: runHistory,
  idle: section(
    'idle',
    IDLE_PLANS,
    measureIdle,
    (run, plan, result) => ({ ...run, plan, result }),
    idleReport,
  ),
  sources: runSources,
  hooks: section(
    'hooks',
    HOOKS_PLANS,
    measureHooks,
    (run, plan, result) => ({ ...run, plan, result }),
    hooksReport,
  ),
  sessions: section(
    'sessions',
    SESSIONS_PLANS,
    measureAbandonedSessions,
    (run, plan, result) => ({ ...run, plan, result }),
    sessionsReport,
  ),
  projects: section(
    'projects',
    PROJECTS_PLANS,
    measureProjects,
    (run, plan, result) => ({ ...run, plan, result }),
    projectsReport,
  ),
  package: section(
    'package',
    PACKAGE_PLANS,
    measurePackage,
    (run, plan, result) => ({ ...run, plan, result }),
    packageReport,
  ),
  delivery: runDelivery,
};

const main = async () => {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } },
  });
  const only = values.only;
  if (only !== undefined && !(SECTIONS as readonly string[]).includes(only)) {
    throw Object.assign(new Error(`--only takes one of ${SECTIONS.join(', ')}, not "${only}".`), {
      code: 'ERR_PARSE_ARGS_BENCH_SECTION',
    });
  }
  const sections = only === undefined ? SECTIONS : [only as Section];
  const args = [values.quick ? '--quick' : '', only === undefined ? '' : `--only ${only}`].filter(Boolean);
  const run: RunInfo = {
    machine: machineInfo(),
    date: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    command: `npm run bench${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`,
    quick: values.quick,
  };
  tempRoot = await mkdtemp(join(tmpdir(), 'pulse-bench-'));
  const started = performance.now();
  for (const name of sections) await RUNNERS[name](tempRoot, run);
  await writeSummary(DOC, run);
  log(`rewrote the summary of ${DOC}; the run took ${Math.round((performance.now() - started) / 1000)} s`);
  await rm(tempRoot, { recursive: true, force: true });
  tempRoot = null;
};

main().then(
  () => process.exit(0),
  (error: unknown) => {
    const usage = String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
    if (usage)
      console.error(
        `bench: ${(error as Error).message}\nUsage: npm run bench [-- [--quick] [--only ${SECTIONS.join('|')}]]`,
      );
    else console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(usage ? 2 : 1);
  },
);
