import { count, mb, ms, type RunInfo, ratio, runLines, signedMb, verdict } from '../lib/format.js';
import { missedRows } from '../lib/judging.js';
import { median } from '../lib/stats.js';
import type { HistoryPlan, SizeResult } from './measure.js';

/** The goals the largest history is held to. */
export const TARGETS = {
  /** spawn → first answered tool call. */
  startupMs: 1500,
  /** call p50 over the empty log's. */
  p50Ratio: 1.1,
  /** daemon RSS over the empty log's, in bytes (MB = 10^6 bytes). */
  rssGrowthBytes: 60e6,
};

/** Everything a history-size run reports. */
export interface HistoryReport extends RunInfo {
  plan: HistoryPlan;
  results: SizeResult[];
}

type Row = [string, ...string[]];

/** The results as one markdown table: a column per history size, target and result for the largest. */
export const formatTable = ({ results, plan }: HistoryReport): string => {
  const first = results[0]!;
  const last = results[results.length - 1]!;
  const startup = (r: SizeResult, key: 'endpointMs' | 'firstCallMs') => median(r.startups.map((s) => s[key]));
  const growth = (r: SizeResult) => (r.memory && first.memory ? r.memory.rss - first.memory.rss : Number.NaN);
  const cells = (fn: (r: SizeResult) => string) => results.map(fn);
  const lastStartup = startup(last, 'firstCallMs');
  const lastGrowth = growth(last);
  const rows: Row[] = [
    ['events.jsonl size', ...cells((r) => mb(r.history.logBytes)), '', ''],
    [
      `startup: spawn → \`MCP endpoint:\` (median of ${plan.startups})`,
      ...cells((r) => ms(startup(r, 'endpointMs'))),
      '',
      '',
    ],
    [
      `startup: spawn → first tool call answered (median of ${plan.startups})`,
      ...cells((r) => ms(startup(r, 'firstCallMs'))),
      `≤ ${count(TARGETS.startupMs)} ms`,
      verdict(lastStartup <= TARGETS.startupMs),
    ],
    [
      `startup: daemon CPU time at that first answer (median of ${plan.startups})`,
      ...cells((r) => {
        const cpu = r.startups.flatMap((s) => (s.cpuMs === null ? [] : [s.cpuMs]));
        return cpu.length === 0 ? 'n/a' : ms(median(cpu));
      }),
      '',
      '',
    ],
    ['`pulse_should_interrupt` p50', ...cells((r) => ms(r.calls.p50)), '', ''],
    [
      'p50 ratio to empty: median of per-round ratios (middle half)',
      ...cells((r) =>
        r === first
          ? '1.00×'
          : `${ratio(r.p50Ratio.median)} (${ratio(r.p50Ratio.low)}–${ratio(r.p50Ratio.high)})`,
      ),
      `≤ ${ratio(TARGETS.p50Ratio)}`,
      verdict(last.p50Ratio.median <= TARGETS.p50Ratio),
    ],
    ['p99', ...cells((r) => ms(r.calls.p99)), '', ''],
    ['mean', ...cells((r) => ms(r.calls.mean)), '', ''],
    ['calls/s (one client, sequential)', ...cells((r) => count(Math.round(r.callsPerSecond))), '', ''],
    [
      `daemon RSS while serving (median of ${plan.rounds} readings, one after each round)`,
      ...cells((r) => (r.memory ? mb(r.memory.rss) : 'n/a')),
      '',
      '',
    ],
    [
      'RSS growth vs empty',
      ...cells((r) => (r === first ? '—' : Number.isNaN(growth(r)) ? 'n/a' : signedMb(growth(r)))),
      `≤ ${mb(TARGETS.rssGrowthBytes)}`,
      Number.isNaN(lastGrowth) ? 'not measured' : verdict(lastGrowth <= TARGETS.rssGrowthBytes),
    ],
    ['daemon peak RSS (VmHWM)', ...cells((r) => (r.memory ? mb(r.memory.peakRss) : 'n/a')), '', ''],
  ];
  const header: Row = [
    'measure',
    ...results.map((r) => `${count(r.history.events)} events`),
    `target (at ${count(last.history.events)})`,
    'result',
  ];
  const line = (row: string[]) => `| ${row.join(' | ')} |`;
  const align = ['---', ...results.map(() => '---:'), '---', '---'];
  return [line(header), line(align), ...rows.map(line)].join('\n');
};

/** The rows whose target was missed, by measure. */
export const missedTargets = (report: HistoryReport): string[] => missedRows(formatTable(report));

/** The `history` section of docs/benchmarks.md. */
export const formatSection = (report: HistoryReport): string => {
  const { plan } = report;
  const calls = plan.rounds * plan.block;
  return `## History size: startup, call latency, memory

PulseAgent re-reads the whole \`events.jsonl\` on every call, so its cost grows with the history.
pulse loads the log once into an in-memory index; this section checks that a long history costs
little at startup and nothing per call.

${runLines(report)}
- Startup: ${plan.startups} cold starts per size, round-robin over the sizes; a new session client makes the first call.
- Calls: one daemon per size, all running; one session client each (\`@modelcontextprotocol/client\` 2.4.0 Client over streamable HTTP) calls \`pulse_should_interrupt\` with \`last_seen_event_id\` = the latest id. ${plan.warmup} warm-up calls each, then ${plan.rounds} rounds of ${plan.block} calls per size (${count(calls)} timed calls per size); within a round the daemons take turns call by call, and the order rotates from round to round.
- History: PulseAgent-format lines with increasing ids, about 55% plan.md, 15% task.md, 20% guidance.md and 10% constraints.md edits (a few plan/task deletions and re-creations), real sha256 and sizes of each version. The files on disk and state.json's hashes match the last events, so the daemon logs nothing on start. **No replan is pending**: state.json acknowledges the latest guidance/constraints event, and the last 10% of the log are plan/task edits made after that ack. Each call is checked to answer \`needs_replan: false\`, \`has_new_events: false\` and the generated latest id.

${formatTable(report)}

### How to read this

Each column is one history size; the empty log is the baseline. Startup is the median of the
cold starts, from spawning \`node dist/bundle/pulse.mjs start\` to the endpoint line and to the first
answered tool call (which adds connecting a session); the CPU row is the daemon's own user +
system time at that answer, which unlike wall time hardly grows when other processes compete
for the cores (compare the load average above with the core count). Call latency is what one
agent sees, the HTTP round trip included. The ratio row is the fairest comparison: the sizes'
calls alternate one by one, the ratio of p50s is taken round by round and its median reported,
with the middle half of the rounds in brackets, so it can differ a little from dividing the p50
row; a bracket that straddles 1.00× means no difference could be measured. RSS is the daemon's
resident memory (\`/proc/<pid>/status\` VmRSS), read after every round; it wanders by several MB
as V8 grows and shrinks its heap, so the median is shown, and differences under about 15 MB
between sizes are noise. V8 returns freed memory lazily, so the growth includes garbage left
from loading the log, not only the index. Targets apply to the largest
history; a **missed** one is a finding to explain, not a number to tune away.
`;
};
