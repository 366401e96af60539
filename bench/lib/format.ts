import type { MachineInfo } from './machine.js';

/** Run context every section's report carries. */
export interface RunInfo {
  machine: MachineInfo;
  date: string;
  command: string;
  quick: boolean;
}

export const count = (n: number) => n.toLocaleString('en-US');
export const ms = (x: number) =>
  Number.isNaN(x)
    ? 'n/a'
    : `${Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2)} ms`;
export const mb = (bytes: number | null) => (bytes === null ? 'n/a' : `${(bytes / 1e6).toFixed(1)} MB`);
/** A change in bytes as MB with its sign: `+2.4 MB`, `−0.3 MB`. */
export const signedMb = (bytes: number) => `${bytes < 0 ? '−' : '+'}${mb(Math.abs(bytes))}`;
export const ratio = (x: number) => `${x.toFixed(2)}×`;
export const percent = (x: number | null) => (x === null ? 'n/a' : `${x.toFixed(2)} %`);
export { verdict } from './judging.js';

/** The machine, Node, date and command lines that open every generated section. */
export const runLines = ({ machine, date, command }: RunInfo): string =>
  [
    `- Machine: ${machine.cpuModel}, ${machine.cores} cores (os.availableParallelism()), ${(machine.totalMemoryBytes / 1e9).toFixed(1)} GB memory, ${machine.os}; load average ${machine.loadAverage.toFixed(2)} at start`,
    `- Node: ${machine.node}`,
    `- Date: ${date}`,
    `- Command: \`${command}\``,
  ].join('\n');

/** A markdown table; the first column left-aligned, figures right-aligned, the last two (target, result) left. */
export const markdownTable = (header: readonly string[], rows: ReadonlyArray<readonly string[]>): string => {
  const line = (row: readonly string[]) => `| ${row.join(' | ')} |`;
  const align = header.map((_, i) => (i === 0 || i >= header.length - 2 ? '---' : '---:'));
  return [line(header), line(align), ...rows.map(line)].join('\n');
};
