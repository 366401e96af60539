import type { CellResult, Latency } from './run-cell.js';
import type { Scenario } from './scenarios.js';

/** One scenario × q line of the table: our runs in each mode, where they were run. */
export interface Row {
  scenario: Scenario;
  q: number;
  off?: CellResult;
  on?: CellResult;
  /** Catch-up on with the gate's default retry bound, when the main columns used another one. */
  onDefaultAttempts?: CellResult;
  /** Catch-up on, with the seed's retry rule (every reflection asks again) in place of ours. */
  seedRule?: CellResult;
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
const deliveryTable = (rows: readonly Row[], maxAttempts: number, defaultAttempts: number): string => {
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

const seconds = (l: Latency | null) => (l === null ? '—' : `${l.p50_s} / ${l.p95_s} / ${l.max_s} s`);

/** The latency measures a target compares, and how ours fare against the seed's rule in one cell. */
const LATENCY_KEYS = ['p50_s', 'p95_s', 'max_s'] as const;

/** What misses a target in one row, in words; empty when every target is met. */
export const missedInRow = (row: Row): string[] => {
  const ours = row.on;
  const seed = row.seedRule;
  if (ours === undefined || seed === undefined) return [];
  const missed: string[] = [];
  if (ours.loss_pct > 0) missed.push(`loss ${pct(ours.loss_pct)}`);
  if (ours.duplicates > 0) missed.push(`${ours.duplicates} duplicates`);
  for (const key of LATENCY_KEYS) {
    const a = ours.latency?.[key];
    const b = seed.latency?.[key];
    if (a !== undefined && b !== undefined && a > b) missed.push(`${key.slice(0, -2)} +${a - b} s`);
  }
  if (ours.think_calls_mean > seed.think_calls_mean)
    missed.push(`think calls ${ours.think_calls_mean} > ${seed.think_calls_mean}`);
  return missed;
};

/**
 * The retry rules side by side, catch-up on: latency from an item first listed to the agent told
 * (median / 95th percentile / longest), beside loss, duplicates and think calls, and what misses a target.
 */
export const latencyTable = (rows: readonly Row[]): string => {
  const head = [
    'scenario',
    'q',
    "latency, seed's rule",
    'latency, ours',
    "loss, seed's rule / ours",
    "duplicates, seed's rule / ours",
    "think calls per run, seed's rule / ours",
    'targets missed',
  ];
  const lines = [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i < 2 ? ' --- ' : ' ---: ')).join('|')}|`,
  ];
  let previous = '';
  for (const row of rows) {
    if (row.on === undefined || row.seedRule === undefined) continue;
    const label = row.scenario.label === previous ? '' : row.scenario.label;
    previous = row.scenario.label;
    const missed = missedInRow(row);
    lines.push(
      `| ${[
        label,
        String(row.q),
        seconds(row.seedRule.latency),
        seconds(row.on.latency),
        `${pct(row.seedRule.loss_pct)} / ${pct(row.on.loss_pct)}`,
        `${row.seedRule.duplicates} / ${row.on.duplicates}`,
        `${row.seedRule.think_calls_mean} / ${row.on.think_calls_mean}`,
        missed.length === 0 ? 'none' : missed.join(', '),
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
};

/** The issue's targets over every cell, one row each, in the form the bench summary collects. */
export const targetsTable = (rows: readonly Row[]): string => {
  const compared = rows.filter((row) => row.on !== undefined && row.seedRule !== undefined);
  const cell = (row: Row) => `(${row.scenario.name}) q ${row.q}`;
  const worst = (pick: (row: Row) => string | null) => {
    const found = compared.map((row) => pick(row)).filter((x): x is string => x !== null);
    return found.length === 0 ? 'none' : found.join('; ');
  };
  const targets: Array<[string, string, string, boolean]> = [
    [
      'events lost (ours, catch-up on, every cell)',
      worst((row) => (row.on!.loss_pct > 0 ? `${cell(row)}: ${pct(row.on!.loss_pct)}` : null)),
      '0',
      compared.every((row) => row.on!.loss_pct === 0),
    ],
    [
      'events told twice (every cell)',
      worst((row) => (row.on!.duplicates > 0 ? `${cell(row)}: ${row.on!.duplicates}` : null)),
      '0',
      compared.every((row) => row.on!.duplicates === 0),
    ],
    ...LATENCY_KEYS.map((key): [string, string, string, boolean] => {
      const over = (row: Row) => (row.on!.latency?.[key] ?? 0) - (row.seedRule!.latency?.[key] ?? 0);
      return [
        `latency ${key.slice(0, -2)}, listed → told (every cell)`,
        worst((row) => (over(row) > 0 ? `${cell(row)}: +${over(row)} s` : null)),
        "≤ the seed's rule",
        compared.every((row) => over(row) <= 0),
      ];
    }),
    [
      'think calls per run (every cell)',
      worst((row) =>
        row.on!.think_calls_mean > row.seedRule!.think_calls_mean
          ? `${cell(row)}: ${row.on!.think_calls_mean} > ${row.seedRule!.think_calls_mean}`
          : null,
      ),
      "≤ the seed's rule",
      compared.every((row) => row.on!.think_calls_mean <= row.seedRule!.think_calls_mean),
    ],
  ];
  const lines = ['| target | over in | target | result |', '| --- | --- | ---: | --- |'];
  for (const [measure, figure, target, met] of targets) {
    lines.push(`| ${measure} | ${figure} | ${target} | ${met ? 'met' : '**missed**'} |`);
  }
  return lines.join('\n');
};

/** The endpoint's outage, the seed's retry rule beside ours: what each asked of a dead endpoint, and what it cost the events. */
export const outageTable = ({ seedRule, ours }: { seedRule: CellResult; ours: CellResult }): string =>
  [
    '| retry rule | think calls per run | latency, listed → told | loss | duplicates |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...(
      [
        ["the seed's rule", seedRule],
        ['ours', ours],
      ] as const
    ).map(
      ([name, r]) =>
        `| ${name} | ${r.think_calls_mean} | ${seconds(r.latency)} | ${pct(r.loss_pct)} | ${r.duplicates} |`,
    ),
  ].join('\n');

/** Every table of the delivery section: the seed's loss table beside ours, the retry rules' latency, the targets, the outage. */
export interface DeliveryTables {
  loss: string;
  latency: string;
  targets: string;
  outage: string | null;
}

export const deliveryTables = (
  rows: readonly Row[],
  maxAttempts: number,
  defaultAttempts: number,
  outage: { seedRule: CellResult; ours: CellResult } | null = null,
): DeliveryTables => ({
  loss: deliveryTable(rows, maxAttempts, defaultAttempts),
  latency: latencyTable(rows),
  targets: targetsTable(rows),
  outage: outage === null ? null : outageTable(outage),
});

/** The JSON the `--json` flag prints: the bare result for one cell, labelled results for several. */
export const deliveryJson = (rows: readonly Row[], maxAttempts: number): unknown => {
  const cells = rows.flatMap((row) =>
    (['off', 'on', 'seedRule'] as const).flatMap((m) => {
      const result = row[m];
      if (result === undefined) return [];
      return [
        {
          scenario: row.scenario.name,
          q: row.q,
          catch_up: m === 'off' ? 'off' : 'on',
          retry: m === 'seedRule' ? 'seed' : 'ours',
          max_attempts: Number.isFinite(maxAttempts) ? maxAttempts : null,
          ...result,
        },
      ];
    }),
  );
  if (cells.length !== 1) return cells;
  const { scenario: _s, q: _q, catch_up: _c, retry: _r, max_attempts: _m, ...only } = cells[0]!;
  return only;
};
