import { markdownTable, mb, percent, type RunInfo, runLines, verdict } from './format.js';
import type { IdlePlan, IdleResult } from './idle.js';

export const TARGETS = {
  /** Resident memory once started, in bytes (MB = 10^6 bytes). */
  rssBytes: 90e6,
  /** CPU over the idle window, in % of one core. */
  cpuPercent: 0.5,
};

export interface IdleReport extends RunInfo {
  plan: IdlePlan;
  result: IdleResult;
}

type Row = [measure: string, none: string, sources: string, target: string, result: string];

const worst = (a: number | null, b: number | null) => Math.max(a ?? Number.NaN, b ?? Number.NaN);
const met = (figure: number, target: number) =>
  Number.isNaN(figure) ? 'not measured' : verdict(figure <= target);

export const rowsOf = ({ result, plan }: IdleReport): Row[] => {
  const { none, sources, memory } = result;
  const rssAtStart = worst(none.rssAtStart, sources.rssAtStart);
  const cpu = worst(none.usage.cpuPercent, sources.usage.cpuPercent);
  return [
    [
      'RSS once `MCP endpoint:` is printed',
      mb(none.rssAtStart),
      mb(sources.rssAtStart),
      `≤ ${mb(TARGETS.rssBytes)}`,
      met(rssAtStart, TARGETS.rssBytes),
    ],
    [
      `RSS over the window (median of ${none.usage.readings} readings)`,
      mb(none.usage.rss),
      mb(sources.usage.rss),
      `≤ ${mb(TARGETS.rssBytes)}`,
      met(worst(none.usage.rss, sources.usage.rss), TARGETS.rssBytes),
    ],
    ['peak RSS (VmHWM, since start)', mb(none.usage.peakRss), mb(sources.usage.peakRss), '', ''],
    [
      `CPU over ${(result.windowMs / 1000).toFixed(0)} s idle, % of one core (${plan.sources} sources: every ${plan.intervalSec} s)`,
      percent(none.usage.cpuPercent),
      percent(sources.usage.cpuPercent),
      `≤ ${percent(TARGETS.cpuPercent)}`,
      met(cpu, TARGETS.cpuPercent),
    ],
    [
      'CPU time in the window',
      `${none.usage.cpuMs ?? 'n/a'} ms`,
      `${sources.usage.cpuMs ?? 'n/a'} ms`,
      '',
      '',
    ],
    [
      'memory breakdown (a third idle daemon, no sources): V8 heap used / heap total / external / array buffers',
      `${mb(memory.heapUsed)} / ${mb(memory.heapTotal)} / ${mb(memory.external)} / ${mb(memory.arrayBuffers)}`,
      '',
      '',
      '',
    ],
  ];
};

export const formatTable = (report: IdleReport): string =>
  markdownTable(
    ['measure', 'no sources', `${report.plan.sources} sources`, 'target', 'result'],
    rowsOf(report),
  );

export const missedTargets = (report: IdleReport): string[] =>
  rowsOf(report).flatMap(([measure, , , , result]) => (result === '**missed**' ? [measure] : []));

export const formatSection = (report: IdleReport): string => {
  const { plan, result } = report;
  return `## Idle: memory and CPU with nothing to do

A sidecar runs all day beside the agent; most of that time nobody calls it. This section checks
that an idle daemon holds little memory and does not poll files or spin.

${runLines(report)}
- Daemons: \`node dist/src/cli.js start --port 0 --log-level warn\`, each on a fresh temp project, none called by any client: one with no sources; one with ${plan.sources} sources every ${plan.intervalSec} s on the fixture MCP server (\`test/fixtures/source-server.mjs --http\`, the one the many-sources section uses), measured once each source has polled once and ${plan.settleMs / 1000} s more have passed (the next polls fall after the window); a third like the first, with bench/loop-monitor.ts preloaded, only for the memory breakdown (its 10 ms timer would add CPU, so its CPU is not reported).
- Window: ${(result.windowMs / 1000).toFixed(1)} s, the same for all. CPU is \`/proc/<pid>/stat\` utime + stime over the window (10 ms ticks); RSS is \`/proc/<pid>/status\` VmRSS once a second.

${formatTable(report)}

### How to read this

RSS is the whole resident process: Node itself (its code, V8's heap and code spaces, the ICU
data) before pulse loads anything is roughly 40 MB of it (\`node -e 0\` peaks near that here); the
rest is the loaded modules (the MCP SDK, Hono, XState, zod, chokidar, pino) and what pulse
keeps. The breakdown row says how much is JavaScript heap. CPU time is counted in 10 ms ticks,
so over ${(result.windowMs / 1000).toFixed(0)} s one tick is ${((10 / result.windowMs) * 100).toFixed(3)} % of a core: a figure that low means the
daemon woke for little more than pino's and the watcher's housekeeping. The daemon watches
\`.pulse/\` with chokidar on inotify (no polling of files) and sleeps between a source's polls.
`;
};
