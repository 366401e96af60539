import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import type { CoverageKind, CoverageRecord } from './machine-coverage.js';

// The summary `npm run test:model` ends with: each model suite writes, per machine, which states
// and transitions it took (`exportCoverage`) into a folder made for this run; once the run is
// over, the union per machine is printed as one table, with the reasons for what no suite took
// and for what only the in-process suites took (the daemon suites' own reasons).

/** Every record written to `dir` so far. */
const readCoverage = async (dir: string): Promise<CoverageRecord[]> => {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith('.json'));
  return Promise.all(
    names.sort().map(async (name) => JSON.parse(await readFile(join(dir, name), 'utf8')) as CoverageRecord),
  );
};

/** One machine's coverage over every suite that ran it, in-process and against the daemon together. */
interface MachineUnion {
  machine: string;
  states: number;
  transitions: number;
  coveredStates: number;
  coveredTransitions: number;
  /** The covered counts per kind of run that ran it. */
  byKind: Partial<Record<CoverageKind, { states: number; transitions: number }>>;
  missingStates: string[];
  /** Transitions no suite took, with every reason a suite gave. */
  missingTransitions: Array<{ id: string; reasons: string[] }>;
  /** Transitions the daemon runs did not take (when some ran the machine), with their reasons. */
  notAgainstDaemon: Array<{ id: string; reasons: string[] }>;
}

const ORDER = ['replan', 'inbox', 'gate', 'poller'];

/** The union per machine of the records, in the order replan, inbox, gate, poller, then the rest. */
const unionCoverage = (records: readonly CoverageRecord[]): MachineUnion[] => {
  const machines = [...new Set(records.map((r) => r.machine))].sort(
    (a, b) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99) || a.localeCompare(b),
  );
  return machines.map((machine) => {
    const own = records.filter((r) => r.machine === machine);
    const first = own[0]!;
    for (const r of own) {
      if (JSON.stringify([r.states, r.transitions]) !== JSON.stringify([first.states, first.transitions]))
        throw new Error(`${r.suite} names the states or transitions of ${machine} unlike ${first.suite}`);
    }
    const daemon = own.filter((r) => r.kind === 'daemon');
    const byDaemon = new Set(daemon.flatMap((r) => r.coveredTransitions));
    const reasonsFor = (id: string, from: readonly CoverageRecord[]) => [
      ...new Set(from.map((r) => r.reasons[id]).filter((r): r is string => r !== undefined)),
    ];
    const states = new Set(own.flatMap((r) => r.coveredStates));
    const transitions = new Set(own.flatMap((r) => r.coveredTransitions));
    const byKind: MachineUnion['byKind'] = {};
    for (const kind of ['in-process', 'daemon'] as const) {
      const ofKind = own.filter((r) => r.kind === kind);
      if (ofKind.length === 0) continue;
      byKind[kind] = {
        states: new Set(ofKind.flatMap((r) => r.coveredStates)).size,
        transitions: new Set(ofKind.flatMap((r) => r.coveredTransitions)).size,
      };
    }
    return {
      machine,
      states: first.states.length,
      transitions: first.transitions.length,
      coveredStates: states.size,
      coveredTransitions: transitions.size,
      byKind,
      missingStates: first.states.filter((s) => !states.has(s)),
      missingTransitions: first.transitions
        .filter((t) => !transitions.has(t))
        .map((id) => ({ id, reasons: reasonsFor(id, own) })),
      notAgainstDaemon:
        daemon.length === 0
          ? []
          : first.transitions
              .filter((t) => transitions.has(t) && !byDaemon.has(t))
              .map((id) => ({ id, reasons: reasonsFor(id, daemon) })),
    };
  });
};

/** The summary table `npm run test:model` ends with. */
const coverageTable = (unions: readonly MachineUnion[]): string => {
  const ratio = (covered: number, total: number) => `${covered}/${total}`;
  const kind = (u: MachineUnion, k: CoverageKind) => {
    const figures = u.byKind[k];
    return figures === undefined
      ? '-'
      : `${ratio(figures.states, u.states)}, ${ratio(figures.transitions, u.transitions)}`;
  };
  const rows = [
    ['machine', 'states', 'transitions', 'in-process (s, t)', 'daemon (s, t)'],
    ...unions.map((u) => [
      u.machine,
      ratio(u.coveredStates, u.states),
      ratio(u.coveredTransitions, u.transitions),
      kind(u, 'in-process'),
      kind(u, 'daemon'),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const item = (machine: string, t: { id: string; reasons: string[] }) =>
    `  ${machine}: ${t.id}\n      ${t.reasons.length > 0 ? t.reasons.join('; ') : '(no reason given)'}`;
  const uncovered = unions.flatMap((u) => [
    ...u.missingStates.map((s) => `  ${u.machine}: state ${s}: (no suite reaches it)`),
    ...u.missingTransitions.map((t) => item(u.machine, t)),
  ]);
  const inProcessOnly = unions.flatMap((u) => u.notAgainstDaemon.map((t) => item(u.machine, t)));
  return [
    'model coverage: states and transitions covered, in-process and daemon runs together',
    line(rows[0]!),
    ...rows.slice(1).map(line),
    uncovered.length === 0 ? 'uncovered: none' : `uncovered:\n${uncovered.join('\n')}`,
    ...(inProcessOnly.length === 0
      ? []
      : [`covered in-process only, not against the daemon:\n${inProcessOnly.join('\n')}`]),
  ].join('\n');
};

/** Global setup: a fresh folder for this run's records; the teardown prints their table and removes it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'pulse-model-coverage-'));
  project.provide('modelCoverageDir', dir);
  return async () => {
    const records = await readCoverage(dir);
    if (records.length > 0) console.log(`\n${coverageTable(unionCoverage(records))}\n`);
    await rm(dir, { recursive: true, force: true });
  };
}
