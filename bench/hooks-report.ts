import { count, markdownTable, ms, type RunInfo, runLines, verdict } from './format.js';
import type { HooksPlan, HooksResult } from './hooks.js';

export const TARGETS = { p50Ms: 80 };

export interface HooksReport extends RunInfo {
  plan: HooksPlan;
  result: HooksResult;
}

export const formatTable = ({ result }: HooksReport): string => {
  const { hook, nodeStart } = result;
  return markdownTable(
    ['measure', '`node -e 0`', '`pulse hook claude --event PreToolUse`', 'target', 'result'],
    [
      [
        'wall time p50 (spawn → exit)',
        ms(nodeStart.p50),
        ms(hook.p50),
        `≤ ${TARGETS.p50Ms} ms`,
        verdict(hook.p50 <= TARGETS.p50Ms),
      ],
      ['wall time p99', ms(nodeStart.p99), ms(hook.p99), '', ''],
      ['mean', ms(nodeStart.mean), ms(hook.mean), '', ''],
      ["the hook's own share: p50 over `node -e 0`'s", '—', ms(hook.p50 - nodeStart.p50), '', ''],
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
- Runs: ${plan.warmup} warm-up pairs, then ${count(plan.runs)} hook runs interleaved one by one with ${count(plan.runs)} runs of \`node -e 0\` (which goes first alternates); wall time from \`spawn()\` to the exit event in the bench process.
- Profile: one more hook run under \`node --cpu-prof --cpu-prof-interval 100\` (µs): ${ms(result.profile.totalMs)} profiled, ${result.profiledFiles} distinct project files were caught running code in a sample (the others load too, but run too briefly to be sampled).

${formatTable(report)}

${profileTable(report)}

### How to read this

\`node -e 0\` is the floor of any hook written for Node: starting the runtime, with nothing
loaded. The difference between the two columns is what pulse adds: loading its hook modules
(ESM: each file is read, parsed and linked), reading stdin, finding \`.pulse/daemon.json\`, one
HTTP round trip to the daemon on loopback, and writing the answer. In the profile, "node
internals" is Node's bootstrap and its ESM loader (resolving, reading and linking each of the
hook's modules: 18 files: \`src/cli.js\`, its six small static imports, and the 11 files under
\`src/hooks/\`, \`src/store/\` and \`src/mcp/\` that \`hook-command.js\` pulls in, as a
\`module.register\` load hook listed them), "(native / V8)" is
compiling and the runtime's own start-up, \`src/\` is pulse's own code running, and the
inclusive rows are pulse's functions with everything they call (the round trip to the daemon
is inside \`runHook\`). pulse's own code is a few percent: the hook's cost is Node's, starting
up and loading ESM modules. The hook path already skips commander, the SDK, XState and zod
(\`src/cli.ts\` answers \`hook\` before loading anything else) and talks to the daemon over
\`node:http\`, not fetch. What would cut the rest: fewer, larger modules on that path (one
file for the hook, which the project would have to keep by hand since it uses no bundler), or
Node's module compile cache (\`module.enableCompileCache()\`, Node ≥ 22.1; this machine runs
Node 20). Nothing in Node lets a new process start in much less than \`node -e 0\`, so on a
machine where that alone is near or above 80 ms the target cannot be met by any Node hook;
compare the two columns, and the load average, before reading the p50 against the target.
`;
};
