import { writeSection } from '../bench/lib/doc-section.js';
import type { DeliveryTables } from './report.js';

/** The seed's table, copied from PulseAgent 0.1.0's design notes (not in this repository). */
const SEED_TABLE = `| scenario | q | before #196 | after #196 | after #197 (seed today) |
|---|---|---|---|---|
| (a) 5 per poll, under the cap (1,200 events) | 0 | 0.0% | 0.0% | 0.0% |
|  | 0.2 | 21.7% | 21.7% | 0.0% |
|  | 0.5 | 48.3% | 48.3% | 0.0% |
| (b) 50 at the first poll (500 events) | 0 | 60.0% | 0.0% | 0.0% |
|  | 0.2 | 64.0% | 16.0% | 0.0% |
|  | 0.5 | 84.0% | 46.0% | 0.0% |
| (c) 30 per poll, always over the cap of 20 (7,200 events) | 0 | 33.3% | 23.6% | 23.6% |
|  | 0.2 | 47.8% | 39.4% | 23.6% |
|  | 0.5 | 65.6% | 60.4% | 23.6% |`;

const HOW_TO_READ = `### How to read this

Loss is the share of arrived events that never reached a delivery the agent acknowledged as
told, summed over the seeds; duplicates are events acknowledged in more than one delivery. The
run drives the real \`pollerMachine\`, \`inboxMachine\` and \`gateMachine\` in one actor system on
a simulated clock (it jumps from timer to timer and lets promises settle at each instant), with
the real acceptor (\`src/effects/accept-items.ts\`) over an in-memory seen set, a source that
lists only its newest items, a thinker that fails with probability q (seeded, each call on its
own), and an agent that acknowledges each delivery at once. The composition wakes the gate after
each insert.

*Catch-up off* is the seed: the poller is given a \`catchUpDelay\` equal to its interval, so a
capped poll waits a whole interval like any other. In (c) 30 items arrive per 300 s and the cap
lets 20 in, so items scroll out of the 90-item window before they are fetched: 23.6% whatever
q is. *Catch-up on* is our poller as it is: a capped poll is followed by another 2 s later
(bounded by the inbox's room), so nothing scrolls out.

The seed retries a put-back event without bound; the main columns do the same. With our gate's
default of 5 attempts, an event whose reflection failed 5 times goes to the dead letters
(visible in \`pulse status\`, never silent): at q = 0.5 that happens to a few batches, which
the extra column counts; at q ≤ 0.2 it does not.

Think calls are reflections that called the thinker, per run; with a model thinker each is a
paid or slow model call. At q = 0 ours equal the seed's in (a) (24: one per poll that inserted;
a reflection on an empty inbox does not call the thinker). The gate **settles after an insert**:
it waits until no insert has come for 3 s (bounded by the reflection interval) before it drains,
so a capped poll and its catch-up poll 2 s later are one thought: (c) with catch-up on makes 24
calls at q = 0, one per poll period, not 48.

**Latency** is, per event told, the time from when the source first listed it to the ack of its
first delivery, over every event of the cell's seeds: the median (p50), the 95th percentile and
the longest. In these scenarios items appear at the poll times, so an event judged at once is
told 3 s after it is listed (the gate gathering inserts for a quiet moment), 7 s in (b) (two catch-up polls first).
*The seed's rule* is our gate asking a failed thinker again at every reflection (a cap of one
reflection interval, \`retry_backoff_sec\` = \`reflect_every_sec\`). *Ours* tells two failures
apart. A failed **answer** (text that is not the judgements JSON, judgements of none of the events,
an HTTP 500 without \`Retry-After\`) is asked again at the next reflection, as the seed does: the
next answer may well be good. A failing **endpoint** (unreachable, no answer in time, HTTP 429 or
502–504, any \`Retry-After\`) is asked again at the next reflection too, then twice as long after
each further failure in a row, at most 5 minutes, for asking a dead or overloaded endpoint sooner
only adds load. New events end either wait. Both run with catch-up on and retries unbounded.

The seed's thinker fails on each call independently of the last, which is what a flaky answer
does and a dead endpoint does not, so its failures are failed answers: ours asks exactly when the
seed's rule does, and the latency, loss and think calls above are the same cell by cell. The
backoff shows in the last table, scenario (a) with answers that never fail but an endpoint that
is down from the 30th to the 60th minute: ours asks the dead endpoint 25 times per run where the
seed's rule asks 36, and tells every event exactly as soon, since each poll's new events end the
wait (the longest, 1803 s, is an item listed as the outage began, told when it ended).

Against the seed's published think calls (25.5 and 27.3 in (a)), ours and the seed's rule as
simulated here make more (29.4 and 43.3): asking again at the next reflection, as its notes say,
cannot make fewer calls than failed thoughts plus one per insert, so the published counts come
from timing its notes do not give. Before this rule ours waited \`retry_backoff_sec\` (360 s,
doubling once) after any failure, or for the next poll, and made 24.6 and 25.6 calls in (a), with
a failed urgent event held for up to 6 minutes; with it, each answer that failed costs the next
reflection and nothing more.`;

/** What the delivery section shows: the tables, the command that made them and the settings it ran with. */
export interface DeliveryReport {
  tables: DeliveryTables;
  command: string;
  settings: string;
}

/** The delivery experiment's section of `docs/benchmarks.md`. */
export const deliverySection = ({ tables, command, settings }: DeliveryReport): string =>
  `## Delivery experiment: the seed's table beside ours

The seed is PulseAgent 0.1.0, the prototype pulse grew from; its design notes (not in this
repository) ask: does every arrived event reach the agent, once, when the
thinker fails with probability q and a source produces faster than the per-tick cap?

The seed's table:

${SEED_TABLE}

Ours (${settings}):

${tables.loss}

Urgent means now: the seed's retry rule beside ours, catch-up on, retries unbounded; latency
from an item first listed to the agent told, p50 / p95 / longest:

${tables.latency}

${tables.targets}

Scenario (a), the thinker's endpoint down from the 30th to the 60th minute, answers otherwise good:

${tables.outage ?? '(not run)'}

- Command: \`${command}\`

${HOW_TO_READ}`;

/** Writes the delivery experiment's section of `docs/benchmarks.md`, leaving the rest as it is. */
export const writeDeliverySection = (path: string, report: DeliveryReport): Promise<void> =>
  writeSection(path, 'delivery', deliverySection(report));
