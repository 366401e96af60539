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

Think calls are reflections that called the thinker, per run; with a model thinker each is a
paid or slow model call. At q = 0 ours equal the seed's in (a) (24: one per poll that inserted;
a reflection on an empty inbox does not call the thinker). Two gate rules keep them at or below
the seed's when the thinker fails, and below catch-up off's in (c) with catch-up on, with nothing
lost:

- **Back off after a failed thought.** Its events go back to the inbox, and the thinker is asked
  again when the next poll brings new events (they end the backoff and make one thought with the
  failed ones) or after \`retry_backoff_sec\` (360 s, doubling once), not at every 120 s timer
  or check-in. A poll's batch so costs one call however often it fails: 24.6 and 25.6 calls in
  (a) at q = 0.2 and 0.5, where the seed made 25.5 and 27.3. A failed batch of 50 events or more
  (a quarter of the inbox) is retried at the timer's pace instead: while a backlog that size
  waits, the inbox fills and a fast source scrolls new items out (with the backoff on every
  batch, (c) with catch-up lost 1.8% at q = 0.5).
- **Settle after an insert.** The gate waits until no insert has come for 3 s (bounded by the
  reflection interval) before it drains, so a capped poll and its catch-up poll 2 s later are
  one thought: (c) with catch-up on makes 24 calls at q = 0, one per poll period, not 48.

Before these rules the figures were 24 / 29.4 / 43.3 in (a), and 48 / 53.9 / 65 in (c) with
catch-up on, for q = 0 / 0.2 / 0.5: a failed batch was retried by the next timer reflection,
120 s later, up to three times before the next poll, and each catch-up poll woke a thought of
its own.`;

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
