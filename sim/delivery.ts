import { GATE_DEFAULTS } from '../machines/gate-settings.js';
import { parseSimArgs, SimArgsError } from './args.js';
import { writeDeliverySection } from './doc.js';
import { deliveryJson, deliveryTables } from './report.js';
import { runRows, settingsOf } from './rows.js';

/*
 * `npm run sim:delivery`: the seed's delivery experiment (see scenarios.ts) on our real poller, inbox and
 * gate machines. `--json` prints the numbers; `--doc` writes the table into docs/benchmarks.md.
 */

const main = async () => {
  const argv = process.argv.slice(2);
  const options = parseSimArgs(argv);
  const started = performance.now();
  const rows = await runRows(options);
  if (options.json) {
    console.log(JSON.stringify(deliveryJson(rows, options.maxAttempts), null, 2));
    return;
  }
  const tables = deliveryTables(rows, options.maxAttempts, GATE_DEFAULTS.maxAttempts);
  const command = ['npm run sim:delivery', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' ');
  console.log(`Delivery experiment: ${settingsOf(options)}.\n\n${tables.loss}\n`);
  if (options.seedRule && options.catchUp.includes(true)) {
    console.log(
      `The seed's retry rule beside ours, catch-up on:\n\n${tables.latency}\n\n${tables.targets}\n`,
    );
  }
  console.log(`${command}: ${((performance.now() - started) / 1_000).toFixed(1)} s`);
  if (options.doc) {
    await writeDeliverySection('docs/benchmarks.md', { tables, command, settings: settingsOf(options) });
    console.log('Wrote the delivery section of docs/benchmarks.md.');
  }
};

main().catch((error: unknown) => {
  console.error(error instanceof SimArgsError ? error.message : error);
  process.exitCode = 1;
});
