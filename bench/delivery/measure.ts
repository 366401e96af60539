import type { SimOptions } from '../../sim/args.js';
import { runExperiment } from '../../sim/rows.js';

/** What the delivery experiment found: its rows and the tables the section shows. */
export type DeliveryResult = Awaited<ReturnType<typeof runExperiment>>;

/**
 * The delivery experiment (`npm run sim:delivery` with `options`): the seed's table beside ours,
 * on a simulated clock, so the machine's load does not change it.
 */
export const measureDelivery = (_dir: string, options: SimOptions): Promise<DeliveryResult> =>
  runExperiment(options);
