import { count, markdownTable, ms, type RunInfo, runLines, verdict } from '../lib/format.js';
import { missedRows } from '../lib/judging.js';
import type { Summary } from '../lib/stats.js';
import type { FleetPlan, FleetResult } from './measure.js';

export const TARGETS = { lost: 0, heldP99Ms: 2_000, receiptP99Ms: 2_000 };

export interface FleetReport extends RunInfo {
  plan: FleetPlan;
  result: FleetResult;
}

const both = (s: Summary) => `${ms(s.p50)} / ${ms(s.p99)}`;

export const formatTable = ({ result }: FleetReport): string =>
  markdownTable(
    ['measure', 'p50 / p99', 'target', 'result'],
    [
      [
        `one daemon, no fleet: write → its agent's push (${count(result.solo.count)} steers)`,
        both(result.solo),
        '',
        '',
      ],
      ...result.fleets.flatMap(({ members, held, eachHeld, receipt, lost }) => [
        [
          `N = ${members}: write on member 1 → every agent on the ${members} members held (the last push; ${count(held.count)} steers)`,
          both(held),
          `p99 ≤ ${ms(TARGETS.heldP99Ms)}`,
          verdict(held.p99 <= TARGETS.heldP99Ms),
        ],
        [`N = ${members}: the same, each agent's own push`, both(eachHeld), '', ''],
        [
          `N = ${members}: one agent's ack → its receipt in every member's \`/status\` (${count(receipt.count)})`,
          both(receipt),
          `p99 ≤ ${ms(TARGETS.receiptP99Ms)}`,
          verdict(receipt.p99 <= TARGETS.receiptP99Ms),
        ],
        [
          `N = ${members}: pushes or receipts that did not come within 15 s`,
          count(lost),
          '0',
          verdict(lost === 0),
        ],
      ]),
    ],
  );

export const missedTargets = (report: FleetReport): string[] => missedRows(formatTable(report));

export const formatSection = (report: FleetReport): string => {
  const { plan, result } = report;
  return `## Fleet: one steer to every agent on N machines, and each receipt back

How long a guidance edit on one member of a fleet takes to hold every agent on every member, and
how long an agent's ack takes to reach every member as a receipt
([fleet.md](fleet.md)). The N members are N daemons on this machine, each with its own HOME
and its own clone of one repository, on one real \`${result.natsVersion}\` (\`-js\`, temp store).

${runLines(report)}
- Each member: \`pulse start --port 0 --log-level warn --fleet nats://127.0.0.1:<port>\`, one session client (\`@modelcontextprotocol/client\`) subscribed to \`pulse://context/latest\`; sizes ${plan.sizes.join(' and ')}, ${count(plan.rounds)} steers each.
- Held: each steer writes \`.pulse/guidance.md\` on member 1 as an editor does; an agent counts as held when its client's \`notifications/resources/updated\` handler runs (the push, not a poll of \`pulse_should_interrupt\`). The row is the last of the N pushes, timed from the write's return.
- Receipt: then one agent (a different member each steer) calls \`pulse_ack_replan\`; timed from its return until every member's \`/status\` (read every ${10} ms) lists the receipt of that agent's member for that steer. The other agents then acknowledge, untimed.
- The baseline is one daemon without \`--fleet\`, the same client and the same write.

${formatTable(report)}

### How to read this

A member's own agent is held on the path the edit-to-agent section times (watcher → event log →
replan → push). Every other member's agent waits also for the path through the fleet: member 1's
event log scan publishes the whole text (kept in the outbox first, fsynced), JetStream stores it
and delivers it to each member's ordered consumer, and each member writes it through its steer
writer, whose write its own watcher then sees: the same local path a second time. With N daemons
on two shared cores the N members' scans, writes and pushes queue for the cores, so the last
push grows with N. A receipt is the ack's outbox write, one publish, each member's consumer, and
the status read.
`;
};
