import { count, markdownTable, ms, type RunInfo, runLines, verdict } from '../lib/format.js';
import { missedRows } from '../lib/judging.js';
import type { EditPlan, EditResult } from './measure.js';

export const TARGETS = { staleReads: 0, pushP50Ms: 50, pushP99Ms: 150 };

export interface EditReport extends RunInfo {
  plan: EditPlan;
  result: EditResult;
}

export const formatTable = ({ result }: EditReport): string => {
  const { push } = result;
  return markdownTable(
    ['measure', 'figure', 'target', 'result'],
    [
      [
        `stale reads: calls right after the write that did not show the new pending replan (of ${count(result.staleRounds)})`,
        count(result.staleReads),
        `${TARGETS.staleReads}`,
        verdict(result.staleReads <= TARGETS.staleReads),
      ],
      [
        'write returned → `notifications/resources/updated` in the client: p50',
        ms(push.p50),
        `≤ ${TARGETS.pushP50Ms} ms`,
        verdict(push.p50 <= TARGETS.pushP50Ms),
      ],
      ['the same: p99', ms(push.p99), `≤ ${TARGETS.pushP99Ms} ms`, verdict(push.p99 <= TARGETS.pushP99Ms)],
      ['the same: mean', ms(push.mean), '', ''],
      [
        "of which: write returned → the event stamped by the daemon (its id's time): p50 / p99",
        `${ms(result.detect.p50)} / ${ms(result.detect.p99)}`,
        '',
        '',
      ],
      [
        `notifications that did not come within 5 s (of ${count(push.count + result.pushLost)})`,
        count(result.pushLost),
        '0',
        verdict(result.pushLost === 0),
      ],
    ],
  );
};

export const missedTargets = (report: EditReport): string[] => missedRows(formatTable(report));

export const formatSection = (report: EditReport): string => {
  const { plan } = report;
  return `## Edit to agent: guidance.md to the next call and to the push

How soon an agent learns that the user edited \`.pulse/guidance.md\`, measured from the moment the
write (\`fs.promises.writeFile\`) returns in the bench process.

${runLines(report)}
- Daemon: \`node dist/bundle/pulse.mjs start --port 0 --log-level warn\` on a fresh temp project; one session client (\`@modelcontextprotocol/client\` 2.4.0 Client over streamable HTTP) subscribed to \`${'pulse://context/latest'}\` with \`resources/subscribe\`.
- Next call: ${count(plan.staleRounds)} rounds; each writes new guidance, calls \`pulse_should_interrupt\` at once and counts it stale unless \`pending_replan_event_id\` is set and differs from the previous round's, then acknowledges with \`pulse_ack_replan\` (a stale round would call again until the replan shows, so the next round starts clean).
- Push: ${count(plan.pushRounds)} rounds; each waits until no notification came for 50 ms (the previous ack's push is over), writes new guidance, and times until the client's \`notifications/resources/updated\` handler runs; then takes and acknowledges the replan.

${formatTable(report)}

### How to read this

A stale read would mean an agent that checks in right after the user saved could go on under
the old guidance. The daemon does not rely on the file watcher for calls: every
\`pulse_should_interrupt\` scans the \`.pulse/\` files first, so the call sees the write even
before the watcher reports it. The push has no such shortcut: it goes file watcher (inotify) →
event log actor (scan, append to \`events.jsonl\`) → replan actor → the session's context watch,
which renders the context and, if it changed, sends the notification down the session's open SSE
stream, where the client's handler runs; the figure is that whole path, the bench client's share
included. The "of which" row splits it: the event's id carries the wall-clock time at which
the daemon's scan stamped it (same machine clock as the bench's \`Date.now()\` after the write),
so it is the detection time; the rest of the push is appending the event to \`events.jsonl\`
(fsynced), recording state.json, the replan actor, rendering the context, and the SSE hop.

Detection waits on purpose, briefly. The watcher's hint does not scan at once: the event log
waits 20 ms (\`settle\` in machines/event-log.ts) so one save becomes one event, and a
watcher-triggered scan that finds a change younger than 20 ms (\`FRESH_CHANGE_MS\` in
src/effects/reconcile-files.ts) does not log it but settles and scans again, because it may be a
save caught between its truncate and its write. The settle is no shorter than that guard, so a
single write is old enough at the first scan after its notice: detection is the settle plus the
watcher's own notice. Until 2026-12-01 the two were 25 ms and 50 ms, which put every push at
≥ 50 ms after the write (quick run that day: p50 63.7 ms, of which detection 54.1 ms); at
20 ms each the same quick run gave p50 30.3 ms, detection 22.3 ms. The price: a writer that
pauses more than about 20 ms between truncating and writing a file (editors take well under a
millisecond) gets two events instead of one; atomic saves (temp file, then rename) are never
affected. A call does not wait for any of this: it scans
with \`requested\` set, logging every change at once, which is why stale reads stay at 0.
`;
};
