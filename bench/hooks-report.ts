import { count, markdownTable, ms, type RunInfo, runLines, verdict } from './format.js';
import type { HooksPlan, HooksResult } from './hooks.js';

export const TARGETS = { p50Ms: 80 };

export interface HooksReport extends RunInfo {
  plan: HooksPlan;
  result: HooksResult;
}

export const formatTable = ({ result }: HooksReport): string => {
  const { hook, hookViaCli, nodeStart } = result;
  return markdownTable(
    [
      'measure',
      '`node -e 0`',
      'through `cli.js` (older setups)',
      // Last, so the summary takes it as the figure judged.
      '`pulse hook claude --event PreToolUse` (`bin.cjs`, as set up)',
      'target',
      'result',
    ],
    [
      [
        'wall time p50 (spawn → exit)',
        ms(nodeStart.p50),
        ms(hookViaCli.p50),
        ms(hook.p50),
        `≤ ${TARGETS.p50Ms} ms`,
        verdict(hook.p50 <= TARGETS.p50Ms),
      ],
      ['wall time p99', ms(nodeStart.p99), ms(hookViaCli.p99), ms(hook.p99), '', ''],
      ['mean', ms(nodeStart.mean), ms(hookViaCli.mean), ms(hook.mean), '', ''],
      [
        "the hook's own share: p50 over `node -e 0`'s",
        '—',
        ms(hookViaCli.p50 - nodeStart.p50),
        ms(hook.p50 - nodeStart.p50),
        '',
        '',
      ],
    ],
  );
};

export const missedTargets = ({ result }: HooksReport): string[] =>
  result.hook.p50 > TARGETS.p50Ms ? [`pulse hook p50 ${ms(result.hook.p50)}`] : [];

const profileTable = ({ result }: HooksReport): string => {
  const { profile } = result;
  const share = (x: number) => `${((x / profile.totalMs) * 100).toFixed(0)} %`;
  return markdownTable(
    ['where the profiled run spent its time (self time)', 'ms', 'share'],
    [
      ...profile.places.slice(0, 6).map((p) => [p.name, ms(p.ms), share(p.ms)]),
      ...profile.inclusive
        .slice(0, 4)
        .map((f) => [
          `inclusive: \`${f.name.replace(/ dist\/src\/.*$/, '')}\` (pulse)`,
          ms(f.ms),
          share(f.ms),
        ]),
    ],
  );
};

export const formatSection = (report: HooksReport): string => {
  const { plan, result } = report;
  return `## Hooks: \`pulse hook\` per tool call

Claude Code runs \`pulse hook claude --event PreToolUse\` as a new process before every tool call,
so its wall time is added to each one.

${runLines(report)}
- Setup: a daemon (\`pulse start --port 0 --log-level warn\`) on a fresh temp project, guidance.md edited so a replan is pending; every hook run gets an \`Edit\` of \`src/app.ts\` on stdin (Claude Code's PreToolUse JSON) and must answer \`"permissionDecision":"deny"\`, so each run finds the daemon (\`.pulse/daemon.json\`), asks \`POST /hook\` and formats the refusal.
- Runs: ${plan.warmup} warm-up rounds, then ${count(plan.runs)} rounds of three runs, one of each: the hook through \`dist/src/bin.cjs\` (the command \`pulse setup\` writes), the same through \`dist/src/cli.js\` (what an older setup wrote), and \`node -e 0\` (which goes first rotates); wall time from \`spawn()\` to the exit event in the bench process.
- Profile: one more hook run through \`bin.cjs\` under \`node --cpu-prof --cpu-prof-interval 100\` (µs): ${ms(result.profile.totalMs)} profiled, ${result.profiledFiles} distinct project files were caught running code in a sample (the others load too, but run too briefly to be sampled).

${formatTable(report)}

${profileTable(report)}

### How to read this

\`node -e 0\` is the floor of any hook written for Node: starting the runtime, with nothing
loaded. The difference is what pulse adds. The command \`pulse setup\` writes runs
\`dist/src/bin.cjs\`, a CommonJS entry that \`require()\`s the hook's 13 ES modules; the
\`cli.js\` column is the same hook through the ES entry older setups named, everything else
equal, so the gap between the two is the entry alone: an ES entry first starts Node's ESM loader
(in a fresh process, importing an empty ES module from CommonJS takes 9–10 ms, \`require()\`ing
it 3 ms), then loads \`cli.js\` and the five modules it imports for its other commands.

Issue 7 took pulse's share of a hook from +58.4 ms over \`node -e 0\` to +42.8 ms (p50; one run
of 30 interleaved rounds at load 0.9, main before the change beside this branch: \`node -e 0\`
119.3 ms, the old hook 177.8 ms, the hook now 162.2 ms). Most of it is the CommonJS entry (the
\`cli.js\` column). The rest: stdin read and the answer written with one synchronous call each,
sparing \`process.stdin\`/\`stdout\` streams (in-process, with \`node:http\` loaded: stdin
4.4–5.9 ms as a stream, 0.3–0.6 ms read at once; stdout 1.4–2.0 vs 0.2–0.3 ms), and
\`daemon.json\` read synchronously, because the first asynchronous file read starts libuv's
thread pool (4.5–6.3 ms; the hook no longer starts those 4 threads). An ES entry has started
both already, so through \`cli.js\` these two gain little.

What dominates now, timed in-process in a script that takes the hook's steps (15 runs, medians,
load 4): Node's start up to the script's first line, 102 ms; \`require()\` of the 13 modules
with \`node:http\`, 25 ms (\`node:http\` alone 7 ms); the round trip to the daemon, 16–20 ms
(the daemon's part is 3–4 ms by curl; the rest is a fresh process's first request, and a second
one in the same process takes 2.5–3 ms); stdin, finding \`daemon.json\`, deciding and writing
the answer, 2 ms together. In the profile, "node internals" is Node's bootstrap and its module
loader, "(native / V8)" is compiling and the runtime's own start-up, \`src/\` is pulse's own code
running, and the inclusive rows are pulse's functions with everything they call (the round trip
is inside \`runHook\`).

Measured and left: one CommonJS file for the whole hook (a one-off bundle, made with the
rolldown that vite brings, still with the stream I/O) ran at p50 175.8 ms beside 191.9 ms for
\`bin.cjs\` and 141.4 ms for \`node -e 0\` in one run (best runs 147.3 vs 161.3 ms): the biggest
lever left, about 15 ms, but keeping it would need a bundler in the build. Merging
modules by hand saves about 0.4 ms a module (20 chained small modules \`require()\`d: 10.6 ms;
one: 2.8 ms), not worth one concept a file. A hand-written HTTP/1.1 request over \`node:net\`
instead of \`node:http\` saves about 6 ms (loading and one request in a fresh process: 14.5 vs
20.3 ms at best), protocol code the project would have to keep. Node's module compile cache
needs Node ≥ 22.1. Nothing in Node lets a new process start in much less than \`node -e 0\`, so
on a machine where that alone is near or above 80 ms the target cannot be met by any Node hook;
compare the columns, and the load average, before reading the p50 against the target.
`;
};
