import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseSimArgs } from '../sim/args.js';
import { settingsOf } from '../sim/rows.js';
import { type CallCostPlan, measureCallCost } from './call-cost/measure.js';
import * as callCostReport from './call-cost/report.js';
import { measureDelivery } from './delivery/measure.js';
import * as deliveryReport from './delivery/report.js';
import { type EditPlan, measureEditToAgent } from './edit-to-agent/measure.js';
import * as editReport from './edit-to-agent/report.js';
import { type FleetPlan, measureFleet } from './fleet/measure.js';
import { natsInstalled } from './fleet/nats-server.js';
import * as fleetReport from './fleet/report.js';
import { type HistoryPlan, measureHistory } from './history/measure.js';
import * as historyReport from './history/report.js';
import { type HooksPlan, measureHooks } from './hooks/measure.js';
import * as hooksReport from './hooks/report.js';
import { type IdlePlan, measureIdle } from './idle/measure.js';
import * as idleReport from './idle/report.js';
import { killAllChildren } from './lib/child-process.js';
import { writeSection } from './lib/doc-section.js';
import type { RunInfo } from './lib/format.js';
import { judgeable, unjudged, unjudgedSection } from './lib/judging.js';
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

/** A section's plans: the full one, and the quick one as what it changes. */
const plans = <P>(full: P, quick: Partial<P>): Record<'full' | 'quick', P> => ({
  full,
  quick: { ...full, ...quick },
});

const HISTORY_PLANS = plans<HistoryPlan>(
  { startups: 7, warmup: 300, rounds: 40, block: 50 },
  { startups: 3, warmup: 100, rounds: 20, block: 25 },
);
const SOURCES_PLANS = plans<SourcesPlan>(
  { sources: 200, intervalSec: 1, itemsPerSource: 3, warmupMs: 5_000, windowMs: 60_000, probeEveryMs: 250 },
  { windowMs: 15_000 },
);
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
const FLEET_PLANS = plans<FleetPlan>({ sizes: [3, 20], rounds: 30 }, { rounds: 10 });
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
  'fleet',
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

/** What every section's report module offers. */
interface SectionReport<R> {
  formatTable(report: R): string;
  formatSection(report: R): string;
  missedTargets(report: R): string[];
}

/** How to measure and report one section. */
interface SectionSpec<P, M, R> {
  plans: Record<'full' | 'quick', P>;
  measure: (dir: string, plan: P, progress: (line: string) => void) => Promise<M>;
  toReport: (run: RunInfo, plan: P, measured: M) => R;
  report: SectionReport<R>;
  /** A simulated clock: the machine's load cannot move the figures, so they are judged at any load. */
  simulated?: boolean;
}

/** The report most sections make: the run, the plan and what was measured. */
const withResult = <P, M>(run: RunInfo, plan: P, result: M) => ({ ...run, plan, result });

/**
 * Measures one section in a fresh folder, prints its table and rewrites its part of the document.
 * The load average is read as the section begins; above the core count its missed rows say "not judged".
 */
const section =
  <P, M, R>(name: Section, spec: SectionSpec<P, M, R>) =>
  async (root: string, runInfo: RunInfo) => {
    const run = { ...runInfo, machine: machineInfo() };
    const plan = run.quick ? spec.plans.quick : spec.plans.full;
    const judged = spec.simulated === true || judgeable(run.machine);
    const dir = join(root, name);
    await mkdir(dir);
    const started = performance.now();
    const measured = await spec.measure(dir, plan, (line) => log(`${name}: ${line}`));
    const report = spec.toReport(run, plan, measured);
    const table = spec.report.formatTable(report);
    console.log(`\n${judged ? table : unjudged(table)}\n`);
    for (const missed of spec.report.missedTargets(report))
      log(
        `${name}: target ${judged ? 'missed' : `not judged at load ${run.machine.loadAverage.toFixed(2)}`}: ${missed}`,
      );
    const body = spec.report.formatSection(report);
    await writeSection(DOC, name, judged ? body : unjudgedSection(body, run.machine));
    log(`${name}: took ${Math.round((performance.now() - started) / 1000)} s; rewrote its section of ${DOC}`);
  };

const RUNNERS: Record<Section, (root: string, run: RunInfo) => Promise<void>> = {
  'call-cost': section('call-cost', {
    plans: CALL_COST_PLANS,
    measure: measureCallCost,
    toReport: (run, plan, cases) => ({ ...run, plan, cases }),
    report: callCostReport,
  }),
  'edit-to-agent': section('edit-to-agent', {
    plans: EDIT_PLANS,
    measure: measureEditToAgent,
    toReport: withResult,
    report: editReport,
  }),
  history: section('history', {
    plans: HISTORY_PLANS,
    measure: measureHistory,
    toReport: (run, plan, results) => ({ ...run, plan, results }),
    report: historyReport,
  }),
  idle: section('idle', {
    plans: IDLE_PLANS,
    measure: measureIdle,
    toReport: withResult,
    report: idleReport,
  }),
  sources: section('sources', {
    plans: SOURCES_PLANS,
    measure: measureManySources,
    toReport: (run, _plan, result) => ({ ...run, result }),
    report: sourcesReport,
  }),
  hooks: section('hooks', {
    plans: HOOKS_PLANS,
    measure: measureHooks,
    toReport: withResult,
    report: hooksReport,
  }),
  sessions: section('sessions', {
    plans: SESSIONS_PLANS,
    measure: measureAbandonedSessions,
    toReport: withResult,
    report: sessionsReport,
  }),
  projects: section('projects', {
    plans: PROJECTS_PLANS,
    measure: measureProjects,
    toReport: withResult,
    report: projectsReport,
  }),
  package: section('package', {
    plans: PACKAGE_PLANS,
    measure: measurePackage,
    toReport: withResult,
    report: packageReport,
  }),
  // `npm run sim:delivery` with its defaults; the quick run is the same.
  delivery: section('delivery', {
    plans: plans(parseSimArgs([]), {}),
    measure: measureDelivery,
    toReport: (run, options, { tables }) => ({ tables, command: run.command, settings: settingsOf(options) }),
    report: deliveryReport,
    simulated: true,
  }),
  fleet: async (root, run) => {
    if (!natsInstalled()) {
      log(
        'fleet: skipped: nats-server is not installed (run `bash scripts/install-nats.sh`); its section is left as it was.',
      );
      return;
    }
    await section('fleet', {
      plans: FLEET_PLANS,
      measure: measureFleet,
      toReport: withResult,
      report: fleetReport,
    })(root, run);
  },
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
