import { type DeliveryReport, deliverySection } from '../../sim/doc.js';
import { missedRows } from '../lib/judging.js';

export type { DeliveryReport } from '../../sim/doc.js';

/** The experiment's tables, as the run prints them. */
export const formatTable = ({ tables }: DeliveryReport): string =>
  [tables.loss, tables.latency, tables.targets, tables.outage].filter((table) => table !== null).join('\n\n');

/** The targets the experiment missed, by measure. */
export const missedTargets = ({ tables }: DeliveryReport): string[] => missedRows(tables.targets);

/** The `delivery` section of docs/benchmarks.md. */
export const formatSection = deliverySection;
