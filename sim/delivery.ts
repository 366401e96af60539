import { parseSimArgs, SimArgsError } from './args.js';
import { writeDeliverySection } from './doc.js';
import { deliveryJson } from './report.js';
import { runExperiment, runRows, settingsOf } from './rows.js';

/*
 * `npm run sim:delivery`: the seed's delivery experiment (see scenarios.ts) on our real poller, inbox and
 * gate machines. `--json` prints the numbers; `--doc` writes the table into docs/benchmarks.md.
 */

const main = async () => {
  const argv = process.argv.slice(2);
  const options = parseSimArgs(argv);
  const started = performance.now();
  if (options.json) {
    console.log(JSON.stringify(deliveryJson(await runRows(options), options.maxAttempts), null, 2));
    return;
  }
  const { compared, tables } = await runExperiment(options);
  const command = ['npm run sim:delivery', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' ');
  console.log(`Delivery experiment: ${settingsOf(options)}.\n\n${tables.loss}\n`);
  if (compared) {
    console.log(
      `The seed's retry rule beside ours, catch-up on:\n\n${tables.latency}\n\n${tables.targets}\n\n` +
        `Scenario (a), the thinker's endpoint down from the 30th to the 60th minute:\n\n${tables.outage}\n`,
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
