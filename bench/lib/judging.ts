import type { MachineInfo } from './machine.js';

/** A target row's result when its figure was not reached. */
export const MISSED = '**missed**';

/** A missed row's result when the section ran on a machine busier than its cores. */
export const NOT_JUDGED = 'not judged';

/** Every result a target row can end with. */
export const RESULTS: ReadonlySet<string> = new Set([
  'met',
  MISSED,
  NOT_JUDGED,
  'not measured',
  'not served',
]);

/** `met` or `**missed**`, the result cell of a target row. */
export const verdict = (met: boolean): string => (met ? 'met' : MISSED);

/**
 * Whether a section's figures can be held to their targets: at a one-minute load average above
 * the core count other work waited for the cores too, so a miss may be the machine's, not pulse's.
 */
export const judgeable = ({ loadAverage, cores }: MachineInfo): boolean => loadAverage <= cores;

/** The measure of each table row in `markdown` whose result is missed. */
export const missedRows = (markdown: string): string[] =>
  markdown
    .split('\n')
    .filter((line) => line.startsWith('| ') && line.endsWith(` | ${MISSED} |`))
    .map((line) => line.slice(2).split(' | ')[0]!);

/** `markdown` with each missed table row marked not judged. */
export const unjudged = (markdown: string): string =>
  markdown.replace(/^(\| .* \| )\*\*missed\*\*( \|)$/gm, `$1${NOT_JUDGED}$2`);

/** Why a section's missed rows were not judged. */
const notJudgedNote = ({ loadAverage, cores }: MachineInfo): string =>
  `Rows marked *${NOT_JUDGED}* missed their target at a load average of ${loadAverage.toFixed(2)} on ${cores} cores (os.availableParallelism()) when this section began: other processes competed for the cores, so the figure says as much about them as about pulse. Run the section again on a quiet machine to judge it.`;

/** A section measured on a busy machine: its missed rows marked not judged, and why, before its first table. */
export const unjudgedSection = (body: string, machine: MachineInfo): string => {
  const marked = unjudged(body);
  if (marked === body) return body;
  const table = marked.search(/^\| /m);
  return `${marked.slice(0, table)}${notJudgedNote(machine)}\n\n${marked.slice(table)}`;
};
