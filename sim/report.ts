import type { CellResult } from './run-cell.js';
import type { Scenario } from './scenarios.js';

/** One scenario × q line of the table: our runs in each mode, where they were run. */
export interface Row {
  scenario: Scenario;
  q: number;
  off?: CellResult;
  on?: CellResult;
  /** Catch-up on with the gate's default retry bound, when the main columns used another one. */
  onDefaultAttempts?: CellResult;
}

const pct = (n: number) => `${n.toFixed(1)}%`;
const mode = (r: CellResult | undefined) => (r === undefined ? '—' : pct(r.loss_pct));
const seedLoss = (row: Row) => {
  const value = row.scenario.seedLossPct?.[String(row.q)];
  return value === undefined ? '—' : pct(value);
};
const seedThink = (row: Row) => row.scenario.seedThinkCalls?.[String(row.q)]?.toString() ?? '—';
const pair = (row: Row, pick: (r: CellResult) => number) =>
  [row.off, row.on].map((r) => (r === undefined ? '—' : String(pick(r)))).join(' / ');

/** The markdown table: the seed's column beside ours, with duplicates, dead letters and think calls. */
export const deliveryTable = (rows: readonly Row[], maxAttempts: number, defaultAttempts: number): string => {
  const bound = Number.isFinite(maxAttempts) ? `maxAttempts ${maxAttempts}` : 'retries unbounded';
  const extra = rows.some((r) => r.onDefaultAttempts !== undefined);
  const head = [
    'scenario',
    'q',
    'seed, after #197',
    `ours, catch-up off (${bound})`,
    `ours, catch-up on (${bound})`,
    ...(extra
      ? [`ours, catch-up on, gate default maxAttempts ${defaultAttempts}: loss (dead-lettered)`]
      : []),
    'duplicates, off / on',
    'dead-lettered, off / on',
    'think calls per run, seed',
    'think calls per run, ours off / on',
  ];
  const lines = [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i < 2 ? ' --- ' : ' ---: ')).join('|')}|`,
  ];
  let previous = '';
  for (const row of rows) {
    const label = row.scenario.label === previous ? '' : row.scenario.label;
    previous = row.scenario.label;
    const d = row.onDefaultAttempts;
    lines.push(
      `| ${[
        label,
        String(row.q),
        seedLoss(row),
        mode(row.off),
        mode(row.on),
        ...(extra ? [d === undefined ? '—' : `${pct(d.loss_pct)} (${d.dead_lettered})`] : []),
        pair(row, (r) => r.duplicates),
        pair(row, (r) => r.dead_lettered),
        seedThink(row),
        pair(row, (r) => r.think_calls_mean),
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
};

/** The JSON the `--json` flag prints: the bare result for one cell, labelled results for several. */
export const deliveryJson = (rows: readonly Row[], maxAttempts: number): unknown => {
  const cells = rows.flatMap((row) =>
    (['off', 'on'] as const).flatMap((m) => {
      const result = row[m];
      if (result === undefined) return [];
      return [
        {
          scenario: row.scenario.name,
          q: row.q,
          catch_up: m,
          max_attempts: Number.isFinite(maxAttempts) ? maxAttempts : null,
          ...result,
        },
      ];
    }),
  );
  if (cells.length !== 1) return cells;
  const { scenario: _s, q: _q, catch_up: _c, max_attempts: _m, ...only } = cells[0]!;
  return only;
};
