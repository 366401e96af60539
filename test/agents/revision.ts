/** The JSON pulse answered a tool with, from the text an agent hands its model (null when there is none). */
export const pulseAnswer = (text: string | undefined) =>
  JSON.parse(/\{[\s\S]*\}/.exec(text ?? '')?.[0] ?? 'null');

/**
 * The MCP protocol revision `pulse status` (or the daemon's log) shows beside the agents whose
 * lines match `label`: the one date-shaped revision on those lines, or what the lines were when
 * there is not exactly one, so a failure says what pulse printed.
 */
export const revisionIn = (text: string, label: RegExp): string => {
  const lines = text.split('\n').filter((line) => label.test(line));
  const revisions = new Set(lines.flatMap((line) => line.match(/\b20\d\d-\d\d-\d\d\b(?!T)/g) ?? []));
  return revisions.size === 1 ? [...revisions][0]! : `no single revision in ${JSON.stringify(lines)}`;
};
