import { writeSection } from '../bench/doc-section.js';

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
lists only its newest items, a thinker that fails with probability q (seeded), and an agent
that acknowledges each delivery at once. The composition wakes the gate after each insert.

*Catch-up off* is the seed: the poller is given a \`catchUpDelay\` equal to its interval, so a
capped poll waits a whole interval like any other. In (c) 30 items arrive per 300 s and the cap
lets 20 in, so items scroll out of the 90-item window before they are fetched: 23.6% whatever
q is. *Catch-up on* is our poller as it is: a capped poll is followed by another 2 s later
(bounded by the inbox's room), so nothing scrolls out.

The seed retries a put-back event without bound; the main columns do the same. With our gate's
default of 5 attempts, an event whose reflection failed 5 times goes to the dead letters
(visible in \`pulse status\`, never silent): at q = 0.5 that happens to a few batches, which
the extra column counts; at q ≤ 0.2 it does not.

Think calls are reflections that called the thinker, per run. At q = 0 ours equal the seed's
(24 in (a): one per poll that inserted; a reflection on an empty inbox does not call the
thinker). With failures ours are higher than the seed's: a failed batch goes back to the inbox
and the next timer reflection (120 s later) retries it, so a poll's batch is tried up to three
times before the next poll merges it with new arrivals, about 24·(1 + q + q²) calls (29.8 and
42 for q = 0.2 and 0.5). The seed's 25.5 and 27.3 mean it retried far less often between polls;
its notes do not say how its reflections were scheduled, so this is the likely reason, not a
measured one. More calls buy nothing in loss here (both lose 0% in (a)), but each is an LLM
call with a real thinker. In (c) with catch-up on, each catch-up poll inserts and wakes the
gate, so there are about twice as many reflections, each with a smaller batch.`;

/** Writes the delivery experiment's section of `docs/benchmarks.md`, leaving the rest as it is. */
export const writeDeliverySection = async (
  path: string,
  { table, command, settings }: { table: string; command: string; settings: string },
): Promise<void> => {
  const body = `## Delivery experiment: the seed's table beside ours

The seed is PulseAgent 0.1.0, the prototype pulse grew from; its design notes (not in this
repository) ask: does every arrived event reach the agent, once, when the
thinker fails with probability q and a source produces faster than the per-tick cap?

The seed's table:

${SEED_TABLE}

Ours (${settings}):

${table}

- Command: \`${command}\`

${HOW_TO_READ}`;
  await writeSection(path, 'delivery', body);
};
