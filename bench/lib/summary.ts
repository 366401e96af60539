import { readFile, writeFile } from 'node:fs/promises';
import { withSection } from './doc-section.js';
import { markdownTable, type RunInfo } from './format.js';
import { judgeable, MISSED, NOT_JUDGED, RESULTS } from './judging.js';

const SECTION = /<!-- bench:([\w-]+):start -->([\s\S]*?)<!-- bench:\1:end -->/g;

/** The anchor GitHub gives a heading. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const cellsOf = (line: string) => line.slice(2, -2).split(' | ');

/**
 * A target row's figure: the cells between the measure and the target, each named by its
 * column when there are two (a section that compares two daemons); the last one when there
 * are more (history sizes, or daemon / floor / ratio, where the last is what is judged).
 */
const figureOf = (header: readonly string[], cells: readonly string[]): string => {
  const figures = cells.slice(1, -2).map((cell, i) => ({ column: header[i + 1]!, cell }));
  if (figures.length === 1) return figures[0]!.cell;
  if (figures.length > 2) return figures[figures.length - 1]!.cell;
  return figures
    .filter(({ cell }) => cell !== '' && cell !== '—')
    .map(({ column, cell }) => `${column}: ${cell}`)
    .join('; ');
};

/**
 * Every target row of every generated section in `document`: a table row whose last cell is a
 * verdict, with its figure (the cell before the target, named by its column) and a link to the section.
 */
export const targetRows = (document: string): string[][] => {
  const rows: string[][] = [];
  for (const [, name, body] of document.matchAll(SECTION)) {
    if (name === 'summary') continue;
    const heading = /^## (.+)$/m.exec(body!)?.[1] ?? name!;
    const link = `[${heading.replace(/:.*$/, '')}](#${anchorOf(heading)})`;
    let header: string[] = [];
    for (const line of body!.split('\n')) {
      if (!line.startsWith('| ')) {
        header = [];
        continue;
      }
      const cells = cellsOf(line);
      if (header.length === 0) {
        header = cells;
        continue;
      }
      const result = cells[cells.length - 1]!;
      if (!RESULTS.has(result)) continue;
      rows.push([cells[0]!, figureOf(header, cells), cells[cells.length - 2]!, result, link]);
    }
  }
  return rows;
};

/** Whether other work competed for the cores, said so the absolute figures are read for what they are. */
const loadNote = (machine: RunInfo['machine']): string =>
  judgeable(machine)
    ? ': not above the core count, so little else competed for them.'
    : ": above the core count, other processes competed for them, and absolute times (startup, drift, the push's latency) suffer far more than the ratios measured side by side in one run.";

const body = (document: string, { date, machine }: RunInfo): string => {
  const rows = targetRows(document);
  const counted = (result: string) => rows.filter((row) => row[3] === result).length;
  const missed = counted(MISSED);
  const notJudged = counted(NOT_JUDGED);
  const unmeasured = counted('not measured');
  const unserved = counted('not served');
  return `## Summary: every target

Rebuilt by each \`npm run bench\` run from the target rows of the sections below, whichever run
measured them: each section states its own date, command and load average. A section that began at a
load average above the core count marks a row it missed *${NOT_JUDGED}*, not missed. The last run began
${date} at a load average of ${machine.loadAverage.toFixed(2)} on ${machine.cores} cores${loadNote(machine)}

${rows.length} targets, ${counted('met')} met, ${missed} missed, ${notJudged} ${NOT_JUDGED}${unmeasured > 0 ? `, ${unmeasured} not measured` : ''}${unserved > 0 ? `, ${unserved} not served (an era the daemon does not speak yet)` : ''}.

${markdownTable(['measure', 'figure', 'target', 'result', 'section'], rows)}
`;
};

/** Rebuilds the summary section at the top of the benchmarks document (before the first generated section). */
export const writeSummary = async (path: string, run: RunInfo): Promise<void> => {
  const document = await readFile(path, 'utf8');
  const start = '<!-- bench:summary:start -->';
  if (document.includes(start)) {
    await writeFile(path, withSection(document, 'summary', body(document, run)));
    return;
  }
  // The first marker on a line of its own: the preamble names the markers in its text too.
  const first = /^<!-- bench:[\w-]+:start -->$/m.exec(document);
  const at = first === null ? document.length : first.index;
  const placed = `${document.slice(0, at)}${start}\n<!-- bench:summary:end -->\n\n${document.slice(at)}`;
  await writeFile(path, withSection(placed, 'summary', body(placed, run)));
};
