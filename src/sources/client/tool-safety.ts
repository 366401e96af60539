import type { PolledSource, ToolHints, ToolSafety } from '../../../machines/external.js';
import type { ClientPool } from './client-pool.js';

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** The four hints of a tool's `annotations`, as it wrote them (booleans only); null when it wrote none. */
export const hintsOf = (annotations: unknown): ToolHints | null => {
  if (typeof annotations !== 'object' || annotations === null) return null;
  const hints: ToolHints = {};
  for (const key of HINTS) {
    const value = (annotations as Record<string, unknown>)[key];
    if (typeof value === 'boolean') hints[key] = value;
  }
  return Object.keys(hints).length === 0 ? null : hints;
};

/** The hints as the tool wrote them, for a message: `readOnlyHint: false, destructiveHint: true`. */
const hintsText = (hints: ToolHints | null): string =>
  hints === null
    ? 'no annotations'
    : HINTS.filter((key) => hints[key] !== undefined)
        .map((key) => `${key}: ${hints[key]}`)
        .join(', ');

/**
 * What pulse does with a source's tool, from the hints it declares in `tools/list`: a source calls
 * its tool every interval, so a side effect would repeat forever. `readOnlyHint: false` or
 * `destructiveHint: true` refuses it unless the source says `"allow_side_effects": true`;
 * `readOnlyHint: true` polls it; a tool that declares neither is polled with a warning.
 */
export const toolSafety = (
  source: Pick<PolledSource, 'name' | 'server' | 'tool' | 'allowSideEffects'>,
  hints: ToolHints | null,
): ToolSafety => {
  const tool = `tool "${source.tool}" of server "${source.server}"`;
  const writes = hints?.readOnlyHint === false || hints?.destructiveHint === true;
  if (writes) {
    const says = hints.destructiveHint === true ? 'says it is destructive' : 'says it is not read-only';
    if (source.allowSideEffects === true) {
      return {
        hints,
        verdict: 'allowed',
        message: `${tool} ${says} (${hintsText(hints)}); source "${source.name}" polls it all the same: it says "allow_side_effects": true.`,
      };
    }
    return {
      hints,
      verdict: 'refused',
      message: `source "${source.name}" is not polled: ${tool} ${says} (${hintsText(hints)}), and a source calls its tool every interval, so its side effect would repeat forever. Pick a tool that only reads (readOnlyHint: true), or, if calling this one on a schedule is what you want, add "allow_side_effects": true to the source in .pulse/sources.json.`,
    };
  }
  if (hints?.readOnlyHint === true) return { hints, verdict: 'read_only', message: null };
  return {
    hints,
    verdict: 'undeclared',
    message: `${tool} does not declare itself read-only (${hintsText(hints)}): source "${source.name}" polls it every interval, so make sure it only reads.`,
  };
};

const VERDICTS: Record<ToolSafety['verdict'], string> = {
  read_only: 'read-only: polled',
  undeclared: 'not declared read-only: polled, with a warning',
  allowed: 'side effects, allowed by the source: polled',
  refused: 'side effects: not polled',
};

/** A tool's hints and what pulse does with them, in a few words: `readOnlyHint: true (read-only: polled)`. */
export const toolSummary = ({ hints, verdict }: ToolSafety): string =>
  `${hintsText(hints)} (${VERDICTS[verdict]})`;

/** How many of a server's tool names an error lists. */
const NAMES_SHOWN = 20;

/**
 * Reads how the source's server lists its tool (`tools/list`, kept per connection) and judges it.
 * A tool the server does not list cannot be judged: that is an error naming the tools it lists.
 */
export const checkTool = async (
  pool: Pick<ClientPool, 'listedTool'>,
  source: Pick<PolledSource, 'name' | 'server' | 'tool' | 'allowSideEffects'>,
): Promise<ToolSafety> => {
  const { listed, annotations, names } = await pool.listedTool(source.server, source.tool);
  if (!listed) {
    const shown = names.slice(0, NAMES_SHOWN).join(', ') || 'none';
    const more = names.length > NAMES_SHOWN ? ` and ${names.length - NAMES_SHOWN} more` : '';
    throw new Error(
      `server "${source.server}" lists no tool "${source.tool}" in tools/list (its tools: ${shown}${more}); fix "tool" in source "${source.name}"`,
    );
  }
  return toolSafety(source, hintsOf(annotations));
};
