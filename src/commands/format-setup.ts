import { pulse } from '../package/pulse-command.js';
import type { FileStatus, SetupFileReport, SetupResult } from './setup.js';

const PART_TITLES = { mcp: 'MCP server', hooks: 'Hooks', instructions: 'Instructions' } as const;

const indent = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? '' : `    ${line}`))
    .join('\n');

const PREVIEW_VERBS: Record<FileStatus, string> = {
  created: 'would create',
  changed: 'would change',
  unchanged: 'unchanged   ',
  conflict: 'conflict    ',
  invalid: 'cannot edit ',
};

/** The most telling status first: a file two parts share (Gemini's settings) shows as one line. */
const RANK: readonly FileStatus[] = ['invalid', 'conflict', 'created', 'changed', 'unchanged'];

const byFile = (files: SetupFileReport[]): SetupFileReport[] => {
  const merged = new Map<string, SetupFileReport>();
  for (const file of files) {
    const seen = merged.get(file.file);
    const [first, other] =
      seen === undefined || RANK.indexOf(file.status) < RANK.indexOf(seen.status)
        ? [file, seen]
        : [seen, file];
    const replaced = [other?.replaced, first.replaced].filter(Boolean).join('; ');
    const backup = other?.backup ?? first.backup;
    merged.set(file.file, { ...first, ...(backup ? { backup } : {}), ...(replaced ? { replaced } : {}) });
  }
  return [...merged.values()];
};

const fileLines = (result: SetupResult): string[] =>
  byFile(result.files).map((file) => {
    const verb = result.written ? file.status.padEnd(9) : PREVIEW_VERBS[file.status];
    const details = [
      file.backup ? `backup: ${file.backup}` : '',
      file.replaced ? `replaced ${file.replaced}` : '',
    ].filter(Boolean);
    const problem = file.problem ? `: ${file.problem}.\n      ${file.fix}` : '';
    return `  ${verb} ${file.file}${details.length > 0 ? ` (${details.join('; ')})` : ''}${problem}`;
  });

const preview = (result: SetupResult): string[] => [
  ...result.parts.flatMap(({ part, file, why, snippet }, index) => [
    `${index + 1}. ${PART_TITLES[part]}, in ${file}${why ? `\n   (${why})` : ''}:`,
    '',
    indent(snippet),
    '',
  ]),
  ...(result.parts.some(({ part }) => part === 'hooks') ? [] : ['Hooks: none (see the notes).', '']),
];

const ending = (result: SetupResult): string => {
  if (result.refused) {
    return result.mode === 'write'
      ? 'Nothing written: pulse writes all of these files or none. Fix what is said below, then run this again.'
      : '`--write` would write nothing as things stand: pulse writes all of these files or none.';
  }
  if (result.already_set_up) return `Already set up for ${result.title}: no file changed.`;
  if (result.written)
    return `Set up for ${result.title}. Restart the agent (or reload its MCP servers) to pick it up.`;
  return `Nothing written. \`${pulse(`setup ${result.agent} --write`)}\` merges these into the files (each changed file is backed up first):`;
};

/** `pulse setup` for people: the three parts (in a preview), what happens to each file, and the notes. */
export const formatSetup = (result: SetupResult): string => {
  const heading = `pulse setup for ${result.title}, MCP endpoint ${result.url}, project ${result.project}`;
  const files = fileLines(result);
  const notes = ['Notes:', ...result.notes.map((note) => `- ${note}`)];
  const gates =
    result.gates.length === 0
      ? []
      : [
          `${result.title} will not use all of this yet:`,
          ...result.gates.flatMap((gate) => [`- ${gate.message}.`, `  Do: ${gate.fix}`]),
          '',
        ];
  const parts = result.mode === 'preview' ? preview(result) : [];
  return [heading, '', ...parts, ending(result), ...files, '', ...gates, ...notes].join('\n');
};
