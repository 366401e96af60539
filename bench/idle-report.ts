import { markdownTable, mb, percent, type RunInfo, runLines, verdict } from './format.js';
import { type IdlePlan, type IdleResult, SMALL_YOUNG_GENERATION } from './idle.js';

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
  const cpu = worst(none.usage.cpuPercent, sources.usage.cpuPercent);
  return [
    [
      'RSS once `MCP endpoint:` is printed (judged: no sources)',
      mb(none.rssAtStart),
      mb(sources.rssAtStart),
      `≤ ${mb(TARGETS.rssBytes)}`,
      met(none.rssAtStart ?? Number.NaN, TARGETS.rssBytes),
    ],
    [
      `RSS over the window (median of ${none.usage.readings} readings; judged: no sources)`,
      mb(none.usage.rss),
      mb(sources.usage.rss),
      `≤ ${mb(TARGETS.rssBytes)}`,
      met(none.usage.rss ?? Number.NaN, TARGETS.rssBytes),
    ],
    [
      `the same daemon as "no sources", run with \`node ${SMALL_YOUNG_GENERATION}\`: RSS at start / over the window / CPU`,
      `${mb(result.smallYoung.rssAtStart)} / ${mb(result.smallYoung.usage.rss)} / ${percent(result.smallYoung.usage.cpuPercent)}`,
      '',
      '',
      '',
    ],
    ['peak RSS (VmHWM, since start)', mb(none.usage.peakRss), mb(sources.usage.peakRss), '', ''],
    [
      `CPU over ${(result.windowMs / 1000).toFixed(0)} s idle, % of one core (${plan.sources} sources: every ${plan.intervalSec} s; judged: both)`,
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

/** The memory profile: Node alone, then what each module the daemon loads added. */
const importTable = ({ result }: IdleReport): string => {
  const { base, modules } = result.imports;
  const name = (module: string) => module.replace(/^.*\/dist\//, 'dist/');
  const total = modules.reduce((sum, m) => sum + m.rss, 0);
  return markdownTable(
    ['loaded in a fresh `node --expose-gc`, in this order', 'RSS added', 'V8 heap used added'],
    [
      ['Node itself, nothing imported', mb(base.rss), mb(base.heapUsed)],
      ...modules.map((m) => [`\`${name(m.module)}\``, mb(m.rss), mb(m.heapUsed)]),
      [
        '**all of the above**',
        mb(base.rss + total),
        mb(base.heapUsed + modules.reduce((sum, m) => sum + m.heapUsed, 0)),
      ],
    ],
  );
};

export const formatSection = (report: IdleReport): string => {
  const { plan, result } = report;
  return `## Idle: memory and CPU with nothing to do

A sidecar runs all day beside the agent; most of that time nobody calls it. This section checks
that an idle daemon holds little memory and does not poll files or spin.

${runLines(report)}
- Daemons: \`node dist/src/cli.js start --port 0 --log-level warn\`, each on a fresh temp project, none called by any client: one with no sources; one with ${plan.sources} sources every ${plan.intervalSec} s on the fixture MCP server (\`test/fixtures/source-server.mjs --http\`, the one the many-sources section uses), measured once each source has polled once and ${plan.settleMs / 1000} s more have passed (the next polls fall after the window); a third like the first, with bench/loop-monitor.ts preloaded, only for the memory breakdown (its 10 ms timer would add CPU, so its CPU is not reported).
- Window: ${(result.windowMs / 1000).toFixed(1)} s, the same for all. CPU is \`/proc/<pid>/stat\` utime + stime over the window (10 ms ticks); RSS is \`/proc/<pid>/status\` VmRSS once a second.

${formatTable(report)}

Memory profile: what the daemon's RSS is made of, measured by loading its modules one at a
time in a fresh Node and reading \`process.memoryUsage()\` after a full GC
(\`bench/import-cost.ts\`); \`dist/src/daemon.js\` comes last and adds pulse's own modules
and whatever the earlier rows did not load (the SDK's other parts, ajv for output schemas).

${importTable(report)}

### How to read this

RSS is the whole resident process, and for an idle daemon it is almost all code being loaded:
the profile above adds up to nearly the RSS at start before pulse has read a file. Node alone is
about 43 MB; zod and the MCP SDK's server (which loads zod's v3 compatibility layer and ajv)
are the largest packages; pulse's own modules (\`dist/src/daemon.js\` and what it imports) are
a few MB. The rest, up to the daemon's figure, is the heap it grew while starting (loading
state, the first scan, the watcher) that V8 keeps as headroom: heap total against heap used in
the breakdown row. The daemon with 10 sources holds more because each configured server gets an
MCP client, its transport and the pollers' actors; the RSS targets are judged on the daemon with
no sources, which is what "after start" means.

What would fix a miss, from the rows above: nothing in pulse's own code is large enough to
matter. A smaller young generation (\`${SMALL_YOUNG_GENERATION}\`, row 3) saves about 10 MB of
headroom at no measurable idle CPU; it would go in the \`pulse\` launcher (node flags cannot be
set from inside a running process) and should first be checked against the call-cost section,
since a smaller young generation means more frequent scavenges under load. Loading fewer
packages would need the SDK to stop pulling in zod's v3 layer and ajv, or a bundler that drops
unused code, which this project does not use. CPU time is counted in 10 ms ticks, so over
${(result.windowMs / 1000).toFixed(0)} s one tick is ${((10 / result.windowMs) * 100).toFixed(3)} % of a core: the daemon watches \`.pulse/\` with chokidar on
inotify (no polling of files) and sleeps between a source's polls.
`;
};
