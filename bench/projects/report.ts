import { markdownTable, mb, ms, type RunInfo, ratio, runLines, verdict } from '../lib/format.js';
import type { ProjectsPlan, ProjectsResult, Serving } from './measure.js';

/** One daemon serving five projects: its RSS within 1.5× one project's daemon, its idle CPU no higher, its calls within 5 %. */
export const TARGETS = { rssRatio: 1.5, p50Ratio: 1.05, cpuToleranceMs: 10 };

export interface ProjectsReport extends RunInfo {
  plan: ProjectsPlan;
  result: ProjectsResult;
}

const cpu = ({ cpuMs, cpuPercent, runMs }: Serving) =>
  runMs !== null
    ? `${runMs.toFixed(1)} ms (${cpuMs?.toFixed(0) ?? 'n/a'} ms in ticks)`
    : cpuMs === null || cpuPercent === null
      ? 'n/a'
      : `${cpuMs.toFixed(0)} ms (${cpuPercent.toFixed(2)} %)`;

/** The idle CPU the target is judged on: every thread's schedstat time where there is one, else the 10 ms ticks. */
const idleMs = (serving: Serving) => serving.runMs ?? serving.cpuMs;

const rssRatio = ({ single, shared }: ProjectsResult) =>
  single.rss === null || shared.rss === null ? null : shared.rss / single.rss;

// /proc counts CPU time in 10 ms ticks: one tick more is no difference.
const cpuMet = ({ single, shared }: ProjectsResult) => {
  const one = idleMs(single);
  const many = idleMs(shared);
  return one === null || many === null || many <= one + TARGETS.cpuToleranceMs;
};

const p50Ratio = ({ single, shared }: ProjectsResult) => shared.p50 / single.p50;

export const formatTable = ({ plan, result }: ProjectsReport): string => {
  const { single, shared, separate } = result;
  const rss = rssRatio(result);
  const n = plan.projects;
  const row = (name: string, s: Serving) => [name, String(s.processes), mb(s.rss), cpu(s), ms(s.p50)];
  return markdownTable(
    [
      'serving',
      'processes',
      'RSS (summed)',
      `CPU over ${result.windowMs / 1000} s idle`,
      'p50 of a check-in',
      'target',
      'result',
    ],
    [
      [...row('1 project, its own daemon', single), '', ''],
      [
        ...row(`${n} projects, one daemon`, shared),
        `RSS ≤ ${TARGETS.rssRatio}× (${rss === null ? 'n/a' : ratio(rss)}); CPU ≤ one daemon's; p50 ≤ ${TARGETS.p50Ratio}× (${ratio(p50Ratio(result))})`,
        verdict(
          (rss === null || rss <= TARGETS.rssRatio) && cpuMet(result) && p50Ratio(result) <= TARGETS.p50Ratio,
        ),
      ],
      [...row(`${n} projects, a daemon each`, separate), '', ''],
    ],
  );
};

export const missedTargets = (report: ProjectsReport): string[] => {
  const { result } = report;
  const missed: string[] = [];
  const rss = rssRatio(result);
  if (rss !== null && rss > TARGETS.rssRatio) missed.push(`RSS is ${ratio(rss)} one project's daemon's`);
  if (!cpuMet(result)) missed.push(`idle CPU ${cpu(result.shared)} over one daemon's ${cpu(result.single)}`);
  if (p50Ratio(result) > TARGETS.p50Ratio)
    missed.push(`the p50 is ${ratio(p50Ratio(result))} one project's daemon's`);
  return missed;
};

export const formatSection = (report: ProjectsReport): string =>
  [
    '## Several projects: one daemon beside a daemon each',
    '',
    runLines(report),
    `- What: one daemon serving ${report.plan.projects} projects (the first \`pulse start\`, then ${report.plan.projects - 1} more on its port, each added to it), beside ${report.plan.projects} daemons of one project and one daemon of one project, all in this run. Each project has an MCP session; after ${report.plan.warmup} warm-up check-ins each and ${report.plan.settleMs / 1000} s to settle, the idle window reads each process's RSS (\`/proc/<pid>/status\` VmRSS, the median of a reading a second) and CPU time: every thread's, from \`/proc/<pid>/task/*/schedstat\` (nanoseconds; the 10 ms ticks of \`/proc/<pid>/stat\` beside it), the settle long enough that a start's one-off work (a burst of about 100 ms some 30 s after a daemon starts, seen in the per-second readings) is behind it; then ${report.plan.rounds} rounds of ${report.plan.block} \`pulse_should_interrupt\` calls each, interleaved (the shared daemon's rotating over its projects, so every one of them answers).`,
    '',
    formatTable(report),
  ].join('\n');
