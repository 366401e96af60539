import { GATE_DEFAULTS } from '../machines/gate.js';
import { parseSimArgs, SimArgsError, type SimOptions } from './args.js';
import { writeDeliverySection } from './doc.js';
import { deliveryJson, deliveryTable, type Row } from './report.js';
import { type CellConfig, runCell } from './run-cell.js';

/*
 * `npm run sim:delivery`: the seed's delivery experiment (spec §6) on our real poller, inbox and
 * gate machines. `--json` prints the numbers; `--doc` writes the table into docs/benchmarks.md.
 */

const HOUR_MS = 3_600_000;

const settingsOf = (o: SimOptions): string =>
  [
    `${o.seeds} seeds per cell`,
    `window ${o.window}`,
    `cap ${o.cap}`,
    `poll every ${o.pollSec} s`,
    `reflect every ${o.reflectSec} s`,
    `${o.arrivalHours} h of arrivals then ${o.drainHours} h to drain`,
  ].join(', ');

/** Runs every requested scenario × q in every requested mode. */
export const runRows = async (o: SimOptions): Promise<Row[]> => {
  const rows: Row[] = [];
  for (const scenario of o.scenarios) {
    for (const q of o.qs) {
      const config = (catchUp: boolean, maxAttempts = o.maxAttempts): CellConfig => ({
        perPoll: scenario.perPoll,
        firstBurst: scenario.firstBurst,
        window: o.window,
        cap: o.cap,
        q,
        pollMs: o.pollSec * 1_000,
        reflectMs: o.reflectSec * 1_000,
        arrivalMs: o.arrivalHours * HOUR_MS,
        drainMs: o.drainHours * HOUR_MS,
        catchUp,
        maxAttempts,
      });
      const row: Row = { scenario, q };
      for (const catchUp of o.catchUp) row[catchUp ? 'on' : 'off'] = await runCell(config(catchUp), o.seeds);
      if (!o.json && o.catchUp.includes(true) && o.maxAttempts !== GATE_DEFAULTS.maxAttempts) {
        row.onDefaultAttempts = await runCell(config(true, GATE_DEFAULTS.maxAttempts), o.seeds);
      }
      rows.push(row);
    }
  }
  return rows;
};

const main = async () => {
  const argv = process.argv.slice(2);
  const options = parseSimArgs(argv);
  const started = performance.now();
  const rows = await runRows(options);
  if (options.json) {
    console.log(JSON.stringify(deliveryJson(rows, options.maxAttempts), null, 2));
    return;
  }
  const table = deliveryTable(rows, options.maxAttempts, GATE_DEFAULTS.maxAttempts);
  const command = ['npm run sim:delivery', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' ');
  console.log(`Delivery experiment: ${settingsOf(options)}.\n\n${table}\n`);
  console.log(`${command}: ${((performance.now() - started) / 1_000).toFixed(1)} s`);
  if (options.doc) {
    await writeDeliverySection('docs/benchmarks.md', { table, command, settings: settingsOf(options) });
    console.log('Wrote the delivery section of docs/benchmarks.md.');
  }
};

main().catch((error: unknown) => {
  console.error(error instanceof SimArgsError ? error.message : error);
  process.exitCode = 1;
});
