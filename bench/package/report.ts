import { count, markdownTable, mb, ms, type RunInfo, ratio, runLines, verdict } from '../lib/format.js';
import type { StartupSample } from '../lib/startup.js';
import { median } from '../lib/stats.js';
import { PACKAGE_SIZES, type PackagePlan, type PackageResult, VARIANTS, type Variant } from './measure.js';

/** Judged on pulse as the tarball installs it, with no sources. */
export const TARGETS = {
  rssAtEndpointBytes: 70e6,
  firstCallEmptyMs: 250,
  firstCallLargeMs: 500,
  /** Issue 33: spawn → first tool call over `node -e 0` in the same run, installed, empty project. */
  firstCallOverNode: 2.5,
};

export interface PackageReport extends RunInfo {
  plan: PackagePlan;
  result: PackageResult;
}

const VARIANT_LABELS: Record<Variant, string> = {
  installed: 'installed from the tarball (`<prefix>/bin/pulse`)',
  bundled: 'bundle in the clone (`node dist/bundle/bin.cjs`)',
  unbundled: "tsc's output, unbundled (`node dist/src/cli.js`)",
};

const medianOf = (samples: StartupSample[], pick: (s: StartupSample) => number | null): number | null => {
  const values = samples.map(pick).filter((v): v is number => v !== null);
  return values.length === 0 ? null : median(values);
};

const figures = (result: PackageResult, variant: Variant, size: number) => {
  const samples = result.startups[variant][size]!;
  return {
    endpoint: medianOf(samples, (s) => s.endpointMs),
    firstCall: medianOf(samples, (s) => s.firstCallMs),
    cpu: medianOf(samples, (s) => s.cpuMs),
    run: medianOf(samples, (s) => s.mainThread?.runMs ?? null),
    wait: medianOf(samples, (s) => s.mainThread?.waitMs ?? null),
    rss: medianOf(samples, (s) => s.rssAtEndpoint),
    rssAfterCall: medianOf(samples, (s) => s.rssAfterFirstCall),
  };
};

const judged = (result: PackageResult) => ({
  rss: figures(result, 'installed', 0).rss,
  empty: figures(result, 'installed', 0).firstCall,
  large: figures(result, 'installed', 1).firstCall,
});

/** The judged start over `node -e 0`, both medians of the same rounds. */
const overNode = (result: PackageResult): number | null => {
  const { empty } = judged(result);
  return empty === null ? null : empty / median(result.nodeFloorMs);
};

const checks = (result: PackageResult) => {
  const { rss, empty, large } = judged(result);
  const ratioToNode = overNode(result);
  return {
    overNode: ratioToNode !== null && ratioToNode <= TARGETS.firstCallOverNode,
    rss: rss !== null && rss <= TARGETS.rssAtEndpointBytes,
    empty: empty !== null && empty <= TARGETS.firstCallEmptyMs,
    large: large !== null && large <= TARGETS.firstCallLargeMs,
    maps: result.tarball.files.every((file) => !file.endsWith('.map')),
    warnings: result.installs.every((run) => run.warnings.length === 0),
  };
};

const cell = (value: number | null, format: (x: number) => string) =>
  value === null ? 'n/a' : format(value);

/** The start-up rows: one per measure and history size, a column per way of running pulse. */
const startupRows = (result: PackageResult): string[][] => {
  const met = checks(result);
  const rows: string[][] = [];
  PACKAGE_SIZES.forEach((size, index) => {
    const at = `${count(size)} events`;
    const of = (pick: (f: ReturnType<typeof figures>) => number | null, format: (x: number) => string) =>
      VARIANTS.map((variant) => cell(pick(figures(result, variant, index)), format));
    rows.push([
      `${at}: RSS once \`MCP endpoint:\` is read (median)`,
      ...of((f) => f.rss, mb),
      ...(index === 0 ? [`≤ ${mb(TARGETS.rssAtEndpointBytes)} (installed)`, verdict(met.rss)] : ['', '']),
    ]);
    rows.push([`${at}: spawn → \`MCP endpoint:\` (median)`, ...of((f) => f.endpoint, ms), '', '']);
    rows.push([
      `${at}: spawn → first tool call answered (median)`,
      ...of((f) => f.firstCall, ms),
      index === 0
        ? `≤ ${ms(TARGETS.firstCallEmptyMs)} (installed)`
        : `≤ ${ms(TARGETS.firstCallLargeMs)} (installed)`,
      verdict(index === 0 ? met.empty : met.large),
    ]);
    rows.push([`${at}: daemon CPU time at that answer (median)`, ...of((f) => f.cpu, ms), '', '']);
    rows.push([
      `${at}: its main thread at that answer: on a CPU / runnable, waiting for one (median)`,
      ...VARIANTS.map((variant) => {
        const { run, wait } = figures(result, variant, index);
        return run === null || wait === null ? 'n/a' : `${ms(run)} / ${ms(wait)}`;
      }),
      '',
      '',
    ]);
    rows.push([`${at}: RSS once that answer is read (median)`, ...of((f) => f.rssAfterCall, mb), '', '']);
  });
  return rows;
};

export const formatTable = ({ result }: PackageReport): string => {
  const floor = median(result.nodeFloorMs);
  const met = checks(result);
  const ratioRow = (size: number): string[] => [
    `${count(PACKAGE_SIZES[size]!)} events: first tool call ÷ \`node -e 0\` (median of each; \`node -e 0\`: ${ms(floor)})`,
    ...VARIANTS.map((variant) => cell(figures(result, variant, size).firstCall, (v) => ratio(v / floor))),
    size === 0 ? `≤ ${ratio(TARGETS.firstCallOverNode)} (installed)` : '',
    size === 0 ? verdict(met.overNode) : '',
  ];
  const stack = median(result.stackFloorMs);
  const overStackRow = [
    `0 events: first tool call ÷ the floor server's (bare v2 SDK + Hono, bundled with a code cache: ${ms(stack)}, ${ratio(stack / floor)} \`node -e 0\`)`,
    ...VARIANTS.map((variant) => cell(figures(result, variant, 0).firstCall, (v) => ratio(v / stack))),
    '',
    '',
  ];
  return markdownTable(
    ['measure', ...VARIANTS.map((v) => VARIANT_LABELS[v]), 'target', 'result'],
    [...startupRows(result), ratioRow(0), ratioRow(1), overStackRow],
  );
};

const installTable = ({ result }: PackageReport): string => {
  const met = checks(result);
  const { tarball, installs, firstStarts } = result;
  const maps = tarball.files.filter((file) => file.endsWith('.map'));
  const warnings = installs.flatMap((run) => run.warnings);
  return markdownTable(
    ['the package', 'figure', 'target', 'result'],
    [
      ['`npm pack`: tarball size / unpacked', `${mb(tarball.bytes)} / ${mb(tarball.unpackedBytes)}`, '', ''],
      ['files in the tarball', tarball.files.map((file) => `\`${file}\``).join(', '), '', ''],
      ['source maps in the tarball', String(maps.length), '0', verdict(met.maps)],
      [
        `\`npm install -g --prefix <fresh> <tarball> --offline\`: wall time (median of ${installs.length})`,
        ms(median(installs.map((run) => run.ms))),
        '',
        '',
      ],
      [
        'the same: `npm warn` lines (install scripts, engines, …)',
        warnings.length === 0 ? 'none' : warnings.join('; '),
        'none',
        verdict(met.warnings),
      ],
      ['installed under the prefix', mb(installs[0]?.installedBytes ?? null), '', ''],
      [
        `first \`pulse start\` of each install, 0 events (no code cache yet): spawn → first tool call answered (median of ${firstStarts.length})`,
        cell(
          medianOf(firstStarts, (s) => s.firstCallMs),
          ms,
        ),
        '',
        '',
      ],
      [
        'the same: daemon CPU time at that answer',
        cell(
          medianOf(firstStarts, (s) => s.cpuMs),
          ms,
        ),
        '',
        '',
      ],
      [
        'the same: RSS once `MCP endpoint:` is read',
        cell(
          medianOf(firstStarts, (s) => s.rssAtEndpoint),
          mb,
        ),
        '',
        '',
      ],
    ],
  );
};

export const missedTargets = ({ result }: PackageReport): string[] => {
  const met = checks(result);
  const { rss, empty, large } = judged(result);
  return [
    ...(met.rss ? [] : [`RSS at the endpoint ${cell(rss, mb)} > ${mb(TARGETS.rssAtEndpointBytes)}`]),
    ...(met.empty
      ? []
      : [`first call on an empty project ${cell(empty, ms)} > ${ms(TARGETS.firstCallEmptyMs)}`]),
    ...(met.large
      ? []
      : [`first call at 100,000 events ${cell(large, ms)} > ${ms(TARGETS.firstCallLargeMs)}`]),
    ...(met.overNode
      ? []
      : [
          `first call on an empty project ${cell(overNode(result), ratio)} of \`node -e 0\` > ${ratio(TARGETS.firstCallOverNode)}`,
        ]),
    ...(met.maps ? [] : ['the tarball holds source maps']),
    ...(met.warnings ? [] : ['npm warned while installing the tarball']),
  ];
};

export const formatSection = (report: PackageReport): string => {
  const { plan } = report;
  return `## Package: install from the tarball, start-up and memory, bundled beside unbundled

What an npm user gets: \`npm pack\` builds the tarball (its \`prepack\` runs \`npm run build\`),
\`npm install -g\` puts \`pulse\` on PATH, and \`pulse start\` runs the daemon from one bundled
script (\`dist/bundle/pulse-main.js\`, every dependency inside, so nothing else is installed),
which the bin compiles with the V8 code cache the first daemon left. This section installs the
tarball into fresh prefixes and starts each once (no code cache yet), then starts pulse from the
first install, from the bundle in the clone and from tsc's unbundled output, side by side.

${runLines(report)}
- Installs: ${plan.installs}, each into a fresh \`--prefix\`, \`--offline\` (a package with no dependencies needs no registry).
- Start-ups: ${plan.startups} rounds; each round runs \`node -e 0\` once, then every way of running pulse on every history in a rotating order: spawn → \`MCP endpoint:\` → a new session client's \`pulse_should_interrupt\` answered (checked to adopt the history as written), then SIGTERM. RSS is \`/proc/<pid>/status\` VmRSS read as soon as the endpoint line is read. No sources; \`--port 0\`; the default log level.
- Histories: empty, and 100,000 events as the history section writes them (no replan pending).

${installTable(report)}

${formatTable(report)}

### How to read this

The installed package and the clone's bundle are the same files (they differ by how the process
starts: the installed bin is \`#!/usr/bin/env node\` through npm's link, the clone's is \`node\`
and the bin), and the unbundled column is what the bundle is made from, one module a file as tsc
writes it. The bundle's gain is the ES module loader's work per file (resolving, reading and
linking several hundred files of the MCP SDK, zod, hono, pino and XState) and the memory those
module records hold; the code cache's gain is parsing the 1.9 MB bundle and compiling the
functions a start runs, which V8 reads back compiled instead (the first-start rows above are the
same install without it). Wall times move with the load average (the machine is shared; compare
it with the core count above); CPU time at the first answer and RSS move much less, and the
columns are measured in the same rounds, so their differences hold. Targets are judged on the
installed package, by wall time, as the issue set them.

**Where the start-up goes, and why a wall-time target can be missed here.** The daemon's own CPU
time at its first answer (the CPU rows) is what pulse spends; the wall time adds the waits for a
core, which on this shared machine are most of it (the load average above against 2 cores; even
\`node -e 0\` took ${ms(median(report.result.nodeFloorMs))} of wall time in this run). By hand on
2026-12-01 (load average 6.5, medians of 9 rounds side by side, CPU as \`/proc/<pid>/stat\`
counts it), spawn → endpoint → first answer: the ES module bundle before the code cache 200 →
260 ms of CPU (488 ms wall); the same code as a script without a cache 210 → 270 ms (393 ms);
with the cache 130 → 170 ms (351 ms). \`node -e 0\` takes 50–60 ms of CPU and \`pulse
--version\` 70–80 ms with the cache (110–160 ms before). A CPU profile of the cached start
(\`node --cpu-prof\`) puts about 15 ms in reading and deserialising the 1.7 MB cache, about 45 ms
in loading Node's own modules (http, net, crypto, child_process, worker_threads, and undici,
Node's fetch, which \`@hono/node-server\` needs for Request and Response, 20–25 ms of it), the
MCP SDK's server side with its zod schemas at the first \`initialize\` about 20 ms, and the rest
in small parts.
Measured and not kept: minifying identifiers (+10–20 ms of CPU; V8 scans tokens, not bytes),
keeping \`node:http2\` out of \`@hono/node-server\` (no difference), loading the MCP SDK right
after the endpoint line (no difference to the first answer, and an idle daemon would hold it).
With no core to wait for, wall time is about the CPU time (${cell(figures(report.result, 'installed', 0).cpu, ms)} here on an empty
project), so the 250 ms target is met on a quiet machine and missed whenever the first call
waits for a core. At the endpoint the MCP SDK is not loaded yet (it is at the first \`/mcp\`
request: hooks, the status page and \`/healthz\` never need it), nor sources.json's schemas
(built when there is a file to parse).

**Where the extra start-up cost of 2026-12-03 came from (issue 33).** The ratio to \`node -e 0\`
rose from 2.48× to 3.2–3.6× between runs; by hand on 2026-12-03, what the code added since
before issue 32 is within the noise, and the rest is the machine's load. Side by side in one run (9 rounds, load 12.1), the bundle from before issue 32 (\`8c7795b\`)
and today's: first call 796 against 771 ms, 240 against 250 ms of CPU, 3.63× against 3.52× a
\`node -e 0\` of 219 ms. What issue 32 put on the path, timed in process (medians of 15, load
about 10): the peer-uid check 1.6 ms of CPU per connection (\`/proc/net/tcp\` makes the kernel
walk its 262,144-bucket TCP hash; the client opens 3–4 connections), 4.2 ms when the peer is
gone (both tables); writing the daemon record 0.8 ms of CPU (4 ms of wall), the lock 1.2 ms,
the user-state folder and the trust check 0.04 ms each: under 10 ms of a 250 ms start, less
than the noise (the same bundle with the peer check cut out measured 855 ms against 771).
\`readBounded\`'s symlink-safe reads made each \`.pulse/\` file 7 thread-pool round trips (134
promise fs requests to the first answer, 110 before); done synchronously they drop to 39, but
the main thread's voluntary context switches stayed at 25–26 and its CPU time did not move (291
against 282 ms), so that was reverted. The moving part is the wait for a core, which the row
"on a CPU / runnable" shows: at load 16.5 the main thread ran 282 ms and waited 829 ms of an
1,143 ms first call (\`node -e 0\` 335 ms); the wait grows with the load and with the time a
start needs a core, which is why the wall-time ratio is judged only at a load within the core
count. One regression was real and is cut: since 2026-12-02 \`src/system/ask-actors.ts\` took a
default from \`sources/config/server-config.ts\` and so built sources.json's zod schemas on every
start (3–5 ms of profile samples); the default now lives in \`config.ts\`, and
\`test/package/start-path.test.ts\` keeps that module off the daemon's static imports. The rest
of a start, counted in CPU profile samples (3 starts): reading the code cache 12 ms, Node's own
modules 21 ms (undici, for \`@hono/node-server\`'s Request and Response, 9–13 ms of it), GC 7 ms.

**Start-up against 2.5× \`node -e 0\` (issue 33, second round, 2026-12-03).** Timed with
\`performance.now()\` marks in the daemon (medians of 7 starts of the clone's bundle, load about
3; the quick harness interleaves \`node -e 0\`, about 60 ms): Node's own start to the bin 64 ms,
reading and deserialising the code cache 18 ms, the CLI 12 ms, the daemon's modules 54 ms, the
daemon to its endpoint line 25–30 ms, then the first \`initialize\` 17 ms and the rest of the
client's four requests about 10 ms, and the bench client's own work between them about 45 ms.
The daemon's modules loaded the whole MCP SDK, which builds its spec schemas as it loads, for
one function (the Host check, \`src/http/host-guard.ts\`, now reads the header itself; a
property test holds it to the SDK's answers): side by side in 41 rounds (load 4.8–5.1), the
endpoint came 23 ms sooner (182.7 → 159.3 ms) and RSS at it fell 77.7 → 72.1 MB, but the first
answer did not move (263.6 against 264.0 ms): the first \`/mcp\` request loads the SDK now, and
it then builds its 2025 schema registry (about 10 ms more). Undici (\`@hono/node-server\` reads
\`Request\`, \`Response\` and \`Headers\` as it loads, and the first answer needs them) and the
SDK are on the path of any first answer. Measured and not kept: a larger young generation for the
start (\`v8.setFlagsFromString('--semi-space-growth-factor=16')\` in the bin: 3 scavenges instead
of 8, but 27 ms more of the main thread's time, paired over 25 rounds); loading the MCP route as
soon as the endpoint line is out (2.5–5 ms sooner a first answer, paired over 31 rounds at load
6, and every idle daemon would hold the SDK); the SDK's \`preloadSchemas()\` then too (builds the
2026 registry as well: 7 ms more main thread). The judged ratio stays above 2.5×: with its main
thread alone at 175–190 ms of CPU to the first answer (schedstat, load 4–6), three times a
\`node -e 0\`, no wait for a core and no client time included, the start cannot reach 2.5×
without dropping what the first answer needs (the code cache, undici, the SDK) or a V8 startup
snapshot, which Node 20 reads only from a \`--snapshot-blob\` flag the \`pulse\` bin cannot pass.

**The floor's own start (issue 33, third round, 2026-12-03).** The last row of the start-up
table starts call-cost's floor server (the bare v2 SDK and Hono, one tool, no project) in each
round beside pulse, bundled by esbuild with the options pulse-main.js gets and compiled with its
own V8 code cache by a loader like pulse's (\`bench/package/floor-startup.ts\`); it answers the
same \`initialize\`, \`notifications/initialized\` and \`pulse_should_interrupt\` from the same
bench client. In this run it took ${ms(median(report.result.stackFloorMs))} to its first answer,
${ratio(median(report.result.stackFloorMs) / median(report.result.nodeFloorMs))} a \`node -e 0\`:
the stack the issue moves pulse onto is at or near 2.5× before pulse adds anything, so the ratio
target leaves pulse almost nothing for its own start (the CLI, the project's actor system, its
\`.pulse/\` files, the lock and the daemon record, its tools, resources and prompts). Side by
side by hand (11 rounds, load 2.7): the floor printed its origin at 117 ms and answered at 160
ms; pulse printed its endpoint at 154 ms (the SDK not loaded yet; the floor loads it before its
origin line) and answered at 252 ms. pulse's own marks (\`performance.now()\`, medians of 9
starts of the clone's bundle, load about 1): the code cache 15 ms, the CLI 10 ms, the daemon's
modules 39 ms (undici 15 ms of them, which the floor loads too), opening the project 20 ms, the
SDK at the first request 17 ms, \`initialize\` 35 ms (about 12 ms of it garbage collection and
7 ms the SDK's 2025 schema registry, which the floor builds too), \`notifications/initialized\`
11 ms (the agent recorded, \`state.json\` written), the GET stream and the call about 17 ms. Tried
again and not kept: keeping \`node:http2\` out of \`@hono/node-server\` (undici, which the
first answer needs, loads it anyway); zod's \`jitless\` mode (235 against 241 ms in one run of 9
starts, within the noise, and its cost on the per-call path not measured); V8 heap flags, which
the installed bin could pass only on its \`#!\` line (paired, 9–11 starts each with its own code
cache, load about 2: a 4 or 16 MB young generation 15 ms slower, a 64 MB initial old generation
or heap 2–8 ms slower, \`--single-threaded-gc\` 10 ms faster once, which depends on the cores a
machine has free). A V8 startup snapshot cannot be built on Node 20 either: \`node --snapshot-blob
snap.blob --build-snapshot entry.js\` with an entry that only requires \`node:http\` fails on
20.20.2 with \`methods.toSorted is not a function\` (Node warns that \`node:http\` is not yet
supported in snapshot builder scripts), and the SDK, Hono and undici all need it, besides the
\`--snapshot-blob\` flag the bin cannot pass (by hand, 2026-12-03).

At 100,000 events the log is read once as latin1 text, each line as pulse writes it checked by
one regular expression and kept unparsed (ids and paths are read from it without parsing; an
event is parsed when asked for), so the start pays ${cell(
    (figures(report.result, 'installed', 1).cpu ?? Number.NaN) -
      (figures(report.result, 'installed', 0).cpu ?? Number.NaN),
    ms,
  )} of CPU more for 21.8 MB than for an empty log, where building an object per event cost about
400 ms more (by hand on this machine, the bundle before this change: 680 against 270 ms).
The regular expression is most of what remains; the id map is built at the first append, not at
start.`;
};
