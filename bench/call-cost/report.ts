import { count, markdownTable, ms, type RunInfo, ratio, runLines, verdict } from '../lib/format.js';
import type { CallCase, CallCostPlan } from './measure.js';

/** Issue 33: at the floor's speed, for both eras. */
export const TARGETS = {
  /** Daemon p50 over the floor's. */
  p50Ratio: 1.0,
  /** Daemon calls/s over the floor's. */
  throughputRatio: 1.0,
};

export interface CallCostReport extends RunInfo {
  plan: CallCostPlan;
  cases: CallCase[];
}

const NOT_SERVED = 'not served';

const bracket = (s: { median: number; low: number; high: number } | null) =>
  s === null ? NOT_SERVED : `${ratio(s.median)} (${ratio(s.low)}–${ratio(s.high)})`;

const daemonCell = (c: CallCase, pick: (side: NonNullable<CallCase['daemon']>) => string) =>
  c.daemon === null ? NOT_SERVED : pick(c.daemon);

const p50Met = (c: CallCase) => c.p50Ratio !== null && c.p50Ratio.median <= TARGETS.p50Ratio;
const throughputMet = (c: CallCase) =>
  c.throughputRatio !== null && c.throughputRatio.median >= TARGETS.throughputRatio;

export const formatTable = ({ cases }: CallCostReport): string =>
  markdownTable(
    [
      'measure',
      'daemon',
      'floor',
      'daemon ÷ floor: median of per-round ratios (middle half)',
      'target',
      'result',
    ],
    cases.flatMap((c) => {
      const name = `${c.era}, ${c.name}`;
      return [
        [
          `${name}: p50`,
          daemonCell(c, (d) => ms(d.p50)),
          ms(c.floor.p50),
          bracket(c.p50Ratio),
          `≤ ${ratio(TARGETS.p50Ratio)}`,
          c.p50Ratio === null ? NOT_SERVED : verdict(p50Met(c)),
        ],
        [
          `${name}: p99`,
          daemonCell(c, (d) => ms(d.p99)),
          ms(c.floor.p99),
          daemonCell(c, (d) => ratio(d.p99 / c.floor.p99)),
          '',
          '',
        ],
        [
          `${name}: calls/s`,
          daemonCell(c, (d) => count(Math.round(d.callsPerSecond))),
          count(Math.round(c.floor.callsPerSecond)),
          bracket(c.throughputRatio),
          `≥ ${ratio(TARGETS.throughputRatio)}`,
          c.throughputRatio === null ? NOT_SERVED : verdict(throughputMet(c)),
        ],
      ];
    }),
  );

export const missedTargets = ({ cases }: CallCostReport): string[] =>
  cases.flatMap((c) => {
    const name = `${c.era}, ${c.name}`;
    if (c.p50Ratio === null || c.throughputRatio === null)
      return [`${name}: the daemon does not serve ${c.era}`];
    return [
      ...(p50Met(c) ? [] : [`${name}: p50 ${ratio(c.p50Ratio.median)} of the floor`]),
      ...(throughputMet(c) ? [] : [`${name}: calls/s ${ratio(c.throughputRatio.median)} of the floor`]),
    ];
  });

export const formatSection = (report: CallCostReport): string => {
  const { plan } = report;
  return `## MCP call cost vs the floor

What \`pulse_should_interrupt\` costs an agent over the cheapest MCP call this stack can make,
for both protocol eras. The floor is built by the bench (\`bench/call-cost/floor-server.ts\`) on
the same v2 SDK and Hono the daemon is to run on (\`@modelcontextprotocol/server\` 2.4.0, Hono +
\`@hono/node-server\`), one process with two endpoints: for 2025-11-25, a sessionful server on
\`WebStandardStreamableHTTPServerTransport\` that also answers one-shot POSTs as the daemon does;
for 2026-07-28, \`createMcpHandler(factory, { legacy: 'reject' })\` mounted in Hono, a server per
request. Each has one tool with \`pulse_should_interrupt\`'s input and output schemas that
returns the daemon's own answer (captured at the start of the run), so both send the same bytes,
built as thin as the SDK allows with the two savings the daemon uses too: one JSON Schema
validator shared by every server and the tool's zod schemas built once. The daemon's 2026-07-28
rows are measured when it answers \`server/discover\` with that revision, and say "not served"
when it does not.

${runLines(report)}
- Servers: the real daemon (\`node dist/bundle/pulse.mjs start --port 0 --log-level warn\` on a fresh temp project, one endpoint for both eras) and the floor, two child processes running side by side in the same run.
- Clients: \`@modelcontextprotocol/client\` 2.4.0: for 2025-11-25 its default (initialize, then \`Mcp-Session-Id\`), for 2026-07-28 \`versionNegotiation: { mode: { pin: '2026-07-28' } }\` (\`server/discover\`, then each request alone), passing back the \`agent_handle\` the daemon answered it as the tool's description asks (the floor answers none). One-shot POSTs: for 2025-11-25 \`fetch\` of a bare JSON-RPC \`tools/call\` (no initialize), for 2026-07-28 the pinned client's own \`tools/call\` POST (its headers and \`_meta\` envelope) recorded once and sent again with \`fetch\`.
- Calls: ${plan.warmup} warm-up calls per server, era and way of calling, then ${plan.rounds} rounds. In each round: ${plan.block} calls per server and era from one client, all of them alternating call by call; ${plan.block} one-shot POSTs each alternating the same way; then ${plan.concurrency} clients per server and era calling ${plan.block} times each at once, one block after another. The order rotates each round, so none always goes first. Every call has \`last_seen_event_id\` = the latest id.

${formatTable(report)}

### How to read this

Latency is what the calling client sees, HTTP round trip included, so the bench process's own
work (the SDK client, JSON) is in both columns alike. The ratio column is the fair comparison:
each round's daemon p50 (or calls/s) over the floor's in that same round, median over the
rounds, with the middle half of the rounds in brackets; the p99 ratio divides the two whole
p99s and is noisy. With ${plan.concurrency} clients at once, calls/s is the block's calls over
its wall time, on a machine whose 2 cores also run the bench client; latency then includes
queueing behind the other clients' calls. What the daemon does that the floor does not:
look at the \`.pulse/\` files on every call (so a write the watcher has not reported yet is
seen by the next call), ask the log, replan and gate actors for their snapshots, register its
other tools, resources and prompts per server, and check the Host header.

What was done about it (profiles of the daemon under 3,000 sequential calls, \`node --cpu-prof\`
summarised by \`bench/lib/cpu-profile-summary.ts\`, 2026-12-01). Before: the daemon took about
1 ms per call more than the floor (1 client: 1.41× p50, 0.75× calls/s in a quick run at load
1.4; one-shot 1.48×, 0.67×), spent in four places, each fixed:
1. **Reading the body** through \`request.body\` made \`@hono/node-server\` build a whole web
   \`Request\` and stream (undici's \`Request\`, \`AbortSignal\`, \`makeTransferable\`); the route
   now reads \`request.text()\`, which takes the socket's bytes directly, whenever a
   \`Content-Length\` is declared (the HTTP parser bounds the body by it).
2. **Four thread-pool stats per call** (\`fs.promises.stat\`): now \`statSync\`, a few µs each.
3. **The scan's actor round trip** on files nobody touched: the event log's \`filesUnchanged\`
   guard compares the four stats with the fingerprints of the last scan and answers the caller
   in the same step, no scan. A file changed within 3 s never matches (racy-index rule), so it
   is still hashed on each call until it settles; the bench therefore starts timing once the
   files the daemon created are older than that.
4. **The check-in's reflection** on an empty inbox (\`gate.reflect\` → drain → nothing): skipped
   when the gate's and inbox's snapshots show it would run at once and drain nothing.
One-shot requests also paid for building a server per request: an Ajv instance (about 230 µs)
and zod objects compiled again from raw shapes; both are now built once, in the floor too.
After all five, the same quick run gave 1 client 1.05–1.08× p50 and 0.85–0.97× calls/s,
one-shot 1.14–1.22×, with helpers' tests loading the machine (load 3.6); the table above is
the run this file was written from. Session calls now meet both targets; one-shot POSTs stayed
just over them in both full runs of 2026-12-01 (p50 1.20×, calls/s 0.85× and 0.87×). What a
one-shot call still does beyond the floor's, timed in process: the read-your-writes check (four
\`statSync\` calls and one \`log.reconcile\` event that the \`filesUnchanged\` guard answers,
20–45 µs) and building, connecting and closing a server with pulse's three tools, resource and
two prompts instead of one tool (45 µs against 25 µs). That is under half of the gap the
ratio shows (about 0.3 ms on a 1.6–1.9 ms floor); the rest is not one function in the profile
but spread over the request path, and the middle half of the rounds (about ±0.05×) is as wide
as the miss. Going further would mean a cheaper read-your-writes check than a scan request to
the event log, which is what keeps stale reads at 0. With ${plan.concurrency} clients at once, both servers are
CPU-bound on 2 cores shared with the bench client, so that block is the noisiest.

What was done about it on 2026-12-03 (issue 33, the v2 SDK and the 2026-07-28 leg; profiles of
3,000–4,000 calls per way of calling, daemon and floor side by side, and the server's own CPU
per call from \`/proc/<pid>/stat\`). Before: 2026-07-28 at 3.8× the floor's p50 with one client
(9.6 ms against 2.5 ms) and 7.8× with eight; 2025-11-25 at 1.2–2.1×. Where it went:
1. **A new agent per 2026 call.** The bench's 2026 client did not pass back the \`agent_handle\`
   pulse mints, so every call was a new agent: the replan actor's book grew to its 1,000-agent
   limit and each call then evicted the oldest (a sort of the whole book), logged the newcomer
   and wrote state.json: about 6 ms more a call, most of the daemon's time. The 2026 clients
   now pass the handle back, as the tool's description asks an agent to; a client that never
   does still costs that (see below).
2. **Zod's JSON Schema conversion on every per-request server.** The v2 SDK converts a tool's
   output schema for each call's result, and for a 2026-07-28 \`tools/call\` its input schema
   too (for the \`Mcp-Param\` header check), memoised per server only; pulse builds a server per
   one-shot and per 2026 request, so this was about a fifth of such a call. The tools' schemas
   now keep their first conversion (\`src/mcp/json-schema-once.ts\`, frozen, shared by every
   server). The floor, a plain SDK server, still pays it: that is the one cost the SDK puts on
   per-request servers that pulse now avoids and the floor does not.
3. **Two actor round trips per call.** A check-in's claim is now read off the gate's snapshot
   (the same decision, \`claimAnswered\`) unless a delivery is on offer, and the event log
   answers a reconcile on still files with every earlier request answered without a new
   snapshot (19 µs → 1 µs and 48 µs → 35 µs in process); the five stats that keep reads
   fresh (stale reads 0 in the edit-to-agent section) stay on every call.
4. **The JSON-RPC shape check** the route makes before the SDK (so a wrong shape gets an error
   naming the field) ran the spec's zod schemas on every message, about 20 µs a session call; a
   strict request with no \`_meta\` or \`task\` in its params, which passes them without doubt,
   now skips them (a property test holds the answers to the schemas' own).

After these, two full runs at load 4.2–4.7 (helpers' tests running) gave 2026-07-28 0.91–0.92×
the floor's p50 with one client and 1.01–1.04× its calls/s, 0.79–0.83× and 1.17–1.20× with
eight, one-shot 0.82–0.86× and 1.17–1.21×; 2025 one-shot 1.00–1.04× and 1.05–1.12×; 2025
sessions still above the floor: 1.07–1.09× p50 and 0.85–0.88× calls/s with one client,
1.16–1.19× and 0.84× with eight.

What a 2025 session call still does beyond the floor's, in its profile (4,000 calls): the
read-your-writes check, about 85 µs in the daemon (five stats and the reconcile event through
the actor system, which no cache may skip: a write just before the call must be in its answer),
the route's own work (the body limit, the session table: about 30 µs), the guards in front
(Host, peer uid, browser, JSON-only) and about 30 µs more of garbage collection; none of it is
the SDK's. A 2026-07-28 caller that never passes its handle back is a new agent on every call
and costs 8–10 ms a call (p50, one client) once the book is full.

A second round on 2026-12-03 (one 2025 session client each, daemon and floor alternating call by
call, 2,500 calls, the daemon's CPU per call from \`/proc/<pid>/stat\`, load 3.5–4.5): the
\`log.reconcile\` event on still files was still sent through the event log actor, whose
parallel chart selected its no-op branch (about 50 µs a call in the profile); \`reconcile()\` now
reads the same decision off the log's snapshot (the idle scan, the same three context guards and
then the wiring's own \`filesUnchanged\`) and sends the event only when the log would act on it.
Daemon p50 over the floor's went from 1.17× to 1.11–1.14×, its CPU per call from 916–948 µs to
812–876 µs (the floor's 648–688 µs); two full runs of this section after it (load 0.5–3.0) gave
2025 sessions 1.10–1.15× the floor's p50 and 0.90–0.96× its calls/s with one client, 1.01–1.03×
and 0.94–0.95× with eight (1.07–1.09×, 0.85–0.88×, 1.16–1.19× and 0.84× before). What a session call still costs beyond the floor's, in a
profile at 50 µs sampling: the six \`lstat\`s of read-your-writes (\`.pulse/\` and the project
folder, so a swapped-in symlink is never followed, and the four files; about 20 µs), the guards
in front of every route (Host, browser, peer uid, JSON-only, pages on loopback, the opening
wait: about 20 µs of Hono's middleware chain), the route's body read, shape check and session
table (about 15 µs), the tool's own answer (the replan book, the gate's snapshot, the answer's
JSON: about 30 µs) and more garbage collection; each is small, none is the SDK's, and none can go
without a guard or a read-your-writes check going with it.

A third round on 2026-12-03 (profiles of 3,000 session calls of the daemon and the floor side by
side, their CPU per call from \`/proc/<pid>/stat\`, the route's steps timed inside the daemon,
\`--trace-gc\`). Before it, one session client each alternating call by call gave 1.17–1.20× the
floor's p50 (load 0.8–1.7), and a full run of this section 1.18× p50 and 0.97× calls/s with one
client, 1.00× and 1.00× with eight (load 0.6–1.7). Done, each with the same checks in the same
order:
1. **The guards as one middleware** (\`src/http/guards.ts\`): six async Hono middlewares (Host,
   browser, peer uid or token, JSON-only, pages on loopback, the opening wait) are now synchronous
   checks with the same refusals, run in order by one; the browser guard parses the URL only when a
   browser header is there, and the Host guard keeps up to 64 headers' verdicts (a property test
   holds them to the SDK's \`validateHostHeader\`). About a tenth of the p50 (1.17–1.20× →
   1.07–1.11×), far more than its CPU (about 20 µs): each middleware was an async step in and out.
2. **The answer as one object literal**: \`pulse_should_interrupt\` spread its answer together
   from three parts; V8 builds such an object slowly, and the SDK's zod check of the output and
   \`JSON.stringify\` then ran several times slower on it (about 8 µs against 2 µs an answer in a
   hot loop). \`wholeAnswer\` lists the fields in the spread's order: the same bytes, a test holds
   it to them. 1.07–1.11× → 1.03–1.06×.
3. **Less JavaScript around the six \`lstat\`s**: plain stats for the fingerprints (BigInt ones
   cost a quarter more; tests show an edit that puts the old times back, and a same-sized file
   renamed into place, are still caught), the four paths joined once, the folder check naming the
   folder only in a refusal, an empty fault list built without spreads: about 3 µs → under 1 µs
   per call in a hot loop.
Tried and taken out again: answering a still check-in with no async steps (\`checkIn()\` and the
reconcile returning a value or a promise, the route and the body read handing on their promises
as they are): within the noise, and every caller had to tell a value from a promise.

After them, one client each alternating gave 1.04–1.07× (load 0.8–1.7); two full runs of this
section gave 2025 sessions 1.09× and 1.04× the floor's p50 and 0.94× and 1.04× its calls/s with
one client, 1.02× and 1.00× p50 and 0.95× and 0.98× calls/s with eight (load 0.8–2.0); the
middle half of the rounds is about ±0.04× wide, so eight clients did not move measurably. What a
session call still costs beyond the floor's: the six \`lstat\`s take 25–45 µs in the daemon, five
to eight times what they take back to back in a loop, because the first file-system call after a
request's JavaScript finds the kernel's caches cold (10–13 µs, then about 2 µs each); checking
the same things in fewer calls would need \`openat2\` or \`fstatat\`, which Node does not offer,
and the watcher cannot stand in for them (a write just before the call must be in its answer).
Garbage collection is not in the p50: one scavenge in about 130 calls in both processes (42 µs
against 38 µs a call on average). The rest is spread thin: the guards' checks (about 10 µs,
mostly building the request's \`Headers\`, which the SDK then reuses), the caller's marks and
party, the check-in and the answer (about 5 µs each). Not done: skipping the SDK's zod check of
pulse's own answer (about 8 µs, the one per-call cost the floor pays that pulse could avoid; it
would drop a check rather than make one cheaper).
`;
};
