import { GATE_DEFAULTS } from '../machines/gate-settings.js';
import type { SimOptions } from './args.js';
import type { Row } from './report.js';
import { type CellConfig, runCell } from './run-cell.js';

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

/** Runs every requested scenario × q in every requested mode. */
export const runRows = async (o: SimOptions): Promise<Row[]> => {
  const rows: Row[] = [];
  for (const scenario of o.scenarios) {
    for (const q of o.qs) {
      const config = (
        catchUp: boolean,
        maxAttempts = o.maxAttempts,
        retry: CellConfig['retry'] = 'ours',
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
      });
      const row: Row = { scenario, q };
      for (const catchUp of o.catchUp) row[catchUp ? 'on' : 'off'] = await runCell(config(catchUp), o.seeds);
      if (o.catchUp.includes(true) && o.seedRule) {
        row.seedRule = await runCell(config(true, o.maxAttempts, 'seed'), o.seeds);
      }
      if (!o.json && o.catchUp.includes(true) && o.maxAttempts !== GATE_DEFAULTS.maxAttempts) {
        row.onDefaultAttempts = await runCell(config(true, GATE_DEFAULTS.maxAttempts), o.seeds);
      }
      rows.push(row);
    }
  }
  return rows;
};
