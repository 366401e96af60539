import { markdownTable, mb, percent, type RunInfo, runLines, verdict } from '../lib/format.js';
import { MISSED } from '../lib/judging.js';
import { type IdlePlan, type IdleResult, SMALL_YOUNG_GENERATION } from './measure.js';
import { type ReducerRun, TRACE_GC } from './memory-reducer.js';

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
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const reducedAt = ({ lastGcMs, waitedMs }: ReducerRun) =>
  lastGcMs === null ? `not within ${seconds(waitedMs)}` : seconds(lastGcMs);

export const rowsOf = ({ result, plan }: IdleReport): Row[] => {
  const { none, sources, memory, smallYoung } = result;
  const cpu = worst(none.usage.cpuPercent, sources.usage.cpuPercent);
  return [
    [
      "start-up over: V8's memory reducer ran (its last `Mark-Compact (reduce)`), from spawn",
      reducedAt(none.reducer),
      reducedAt(sources.reducer),
      '',
      '',
    ],
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
      `the same daemon as "no sources", run with \`node ${SMALL_YOUNG_GENERATION}\`: RSS at start / over the window / CPU / start-up over`,
      `${mb(smallYoung.rssAtStart)} / ${mb(smallYoung.usage.rss)} / ${percent(smallYoung.usage.cpuPercent)} / ${reducedAt(smallYoung.reducer)}`,
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
  rowsOf(report).flatMap(([measure, , , , result]) => (result === MISSED ? [measure] : []));

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
- Daemons: \`node dist/bundle/pulse.mjs start --port 0 --log-level warn\`, each on a fresh temp project, none called by any client: one with no sources; one with ${plan.sources} sources every ${plan.intervalSec} s on the fixture MCP server (\`test/fixtures/source-server.mjs --http\`, the one the many-sources section uses), measured once each source has polled once (the next polls fall after the window); a third like the first, with bench/lib/loop-monitor.ts preloaded, only for the memory breakdown (its 10 ms timer would add CPU, so its CPU is not reported).
- Window: ${(result.windowMs / 1000).toFixed(1)} s, the same for all, starting ${seconds(result.windowStartMs)} after the first daemon's spawn: once V8's memory reducer has run in each measured daemon and ${plan.reducer.settleMs / 1000} s have passed without another of its GCs (the measured daemons run with \`node ${TRACE_GC}\`, which prints a line per GC and changes none; waited for at most ${plan.reducer.limitMs / 1000} s after spawn), so the window measures idle, not the end of start-up. CPU is \`/proc/<pid>/stat\` utime + stime over the window (10 ms ticks); RSS is \`/proc/<pid>/status\` VmRSS once a second.

${formatTable(report)}

Memory profile: what the RSS of the daemon without sources is made of, measured by loading its modules one at a
time in a fresh Node and reading \`process.memoryUsage()\` after a full GC
(\`bench/idle/import-cost.ts\`); \`dist/src/daemon.js\` comes last and adds pulse's own modules
and whatever the earlier rows did not load (the SDK's other parts, ajv for output schemas).

${importTable(report)}

### How to read this

RSS is the whole resident process, and for an idle daemon it is almost all code being loaded:
the profile above adds up to most of the RSS at start before pulse has read a file. Node alone
is about 43 MB; zod and the MCP SDK's server (which loads zod's v3 compatibility layer and ajv)
are the largest packages; pulse's own modules (\`dist/src/daemon.js\` and what it imports) are
a few MB. The SDK's client and transports are loaded only when a source is first polled
(\`src/sources/client/client-pool.ts\`), so the daemon with no sources does not hold them (by hand,
six start-ups of each, alternating: RSS at \`MCP endpoint:\` 91.5–95.8 MB, median 93.0, before;
84.4–93.1 MB, median 90.0, after). The daemon with ${plan.sources} sources holds more
because each configured server gets an MCP client, its transport and the pollers' actors.

**RSS at start against RSS over the window.** At start the heap still has the room V8 grew
while start-up allocated, the young generation most of all, and nothing gives it back until
V8's memory reducer runs. The reducer waits for allocation to
slow, checking every 8 s, then runs two or three memory-reducing mark-compacts and shrinks the
heap (by hand, \`node --trace-gc dist/src/cli.js start\`: \`Mark-Compact (reduce)\` at 24.6,
25.3 and 26.0 s after spawn, heap committed 35.4 → 19.7 MB, RSS 87.7 → 71.4 MB). That GC is
what the window now waits out (here ${reducedAt(result.none.reducer)} after spawn with no
sources, ${reducedAt(result.sources.reducer)} with sources), and it is the difference between
RSS at start (${mb(result.none.rssAtStart)}) and over the window (${mb(result.none.usage.rss)}).
RSS at start also moves by several MB from run to run, with how far the young generation had
grown when the line was printed: 86.4–93.7 MB with no sources over the four full runs made for
this change (2026-12-01), so a run can land on either side of the target.
Calling \`gc()\` right after start does not give that room back: by hand, a forced
full GC 3 s after spawn (\`gc()\` or \`gc({ flavor: 'last-resort' })\` through
\`v8.setFlagsFromString('--expose-gc')\`) took 21–42 ms, left RSS at 87.6–88.1 MB, and the
reducer still ran 14–15 s later; so the daemon does not force one.

A smaller young generation (\`${SMALL_YOUNG_GENERATION}\`, its row) starts smaller
(${mb(result.smallYoung.rssAtStart)}), but once both have been reduced it holds
${mb(result.smallYoung.usage.rss)} against ${mb(result.none.usage.rss)} over the window: it
mostly moves the figure taken before the reducer. It would also have to go in every launcher (node flags cannot
be set from inside a running process: the \`#!/usr/bin/env -S node …\` shebang, which busybox's
\`env\` does not take, and the \`start\` script), and it means more scavenges under load: in
two alternating quick call-cost runs by hand (load average about 5 on 2 cores), one-shot POSTs
were 1.21× and 1.31× of the floor with it against 1.19× and 1.14× without, and 8 clients' calls/s
0.78× and 0.83× against 0.87× and 0.91×. So pulse does not set it.

**CPU.** Before this bench waited for start-up to be over, the quick run's 15 s window began
3 s after the sources' first polls and could catch that GC (17 ticks, 170 ms, by hand at 25–26 s
after spawn): that was the 1.27 % of an earlier run, start-up residue rather than idle work.
Per-thread readings of \`/proc/<pid>/task/*/stat\` by hand over 135 s, with and without
sources, show what wakes an idle daemon: the main thread every 8 s for the reducer's checks
until it has run; every 30 s for Node's HTTP server checking its connections' timeouts
(\`connectionsCheckingInterval\`), 0 to 2 ticks each; and at 120 s, in step with the gate's
reflection timer (every 120 s; it drains the empty inbox), 1 tick. A few ticks a minute at
most, far under the target, so they are left as they are. CPU time is counted in 10 ms ticks, so over
${(result.windowMs / 1000).toFixed(0)} s one tick is ${((10 / result.windowMs) * 100).toFixed(3)} % of a core: the daemon watches \`.pulse/\` and the project root with
inotify (no polling of files while the watch works) and sleeps between a source's polls.
`;
};
