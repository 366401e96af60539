import { GATE_DEFAULTS } from '../machines/gate-settings.js';
import type { SimOptions } from './args.js';
import { deliveryTables, type Row } from './report.js';
import { type CellConfig, type CellResult, runCell } from './run-cell.js';
import { SCENARIOS, type Scenario } from './scenarios.js';

const HOUR_MS = 3_600_000;

export const settingsOf = (o: SimOptions): string =>
  [
    `${o.seeds} seeds per cell`,
    `window ${o.window}`,
    `cap ${o.cap}`,
    `poll every ${o.pollSec} s`,
    `reflect every ${o.reflectSec} s`,
    `${o.arrivalHours} h of arrivals then ${o.drainHours} h to drain`,
  ].join(', ');

/** One cell of the experiment: a scenario at one q, with the run's clock and limits. */
const cellConfig = (
  o: SimOptions,
  scenario: Scenario,
  q: number,
  { catchUp = true, maxAttempts = o.maxAttempts, retry = 'ours', outage }: Partial<CellConfig> = {},
): CellConfig => ({
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
  retry,
  ...(outage === undefined ? {} : { outage }),
});

/** The thinker's endpoint down for half an hour, from the first half hour of arrivals on. */
const OUTAGE = { fromMs: HOUR_MS / 2, toMs: HOUR_MS } as const;

/** Scenario (a) without flaky answers, its endpoint down for `OUTAGE`: the seed's retry rule beside ours. */
const runOutage = async (o: SimOptions): Promise<{ seedRule: CellResult; ours: CellResult }> => {
  const config = (retry: CellConfig['retry']) => cellConfig(o, SCENARIOS.a, 0, { retry, outage: OUTAGE });
  return { seedRule: await runCell(config('seed'), o.seeds), ours: await runCell(config('ours'), o.seeds) };
};

/** Runs every requested scenario × q in every requested mode. */
export const runRows = async (o: SimOptions): Promise<Row[]> => {
  const rows: Row[] = [];
  for (const scenario of o.scenarios) {
    for (const q of o.qs) {
      const row: Row = { scenario, q };
      for (const catchUp of o.catchUp)
        row[catchUp ? 'on' : 'off'] = await runCell(cellConfig(o, scenario, q, { catchUp }), o.seeds);
      if (o.catchUp.includes(true) && o.seedRule) {
        row.seedRule = await runCell(cellConfig(o, scenario, q, { retry: 'seed' }), o.seeds);
      }
      if (!o.json && o.catchUp.includes(true) && o.maxAttempts !== GATE_DEFAULTS.maxAttempts) {
        row.onDefaultAttempts = await runCell(
          cellConfig(o, scenario, q, { maxAttempts: GATE_DEFAULTS.maxAttempts }),
          o.seeds,
        );
      }
      rows.push(row);
    }
  }
  return rows;
};

/** The whole experiment as the delivery section shows it; the outage runs only where the seed's rule is compared. */
export const runExperiment = async (o: SimOptions) => {
  const rows = await runRows(o);
  const compared = o.seedRule && o.catchUp.includes(true);
  const outage = compared ? await runOutage(o) : null;
  return { rows, compared, tables: deliveryTables(rows, o.maxAttempts, GATE_DEFAULTS.maxAttempts, outage) };
};
