import type { ChangeResult, EditOptions, FileEdit } from './file-edit.js';

export type JsonObject = Record<string, unknown>;

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A change to a parsed JSON document, made in place. */
export type JsonChange = (doc: JsonObject, options: EditOptions) => ChangeResult;

/** The indentation the user's file uses (two spaces for a new one), so our rewrite looks like theirs. */
const indentOf = (text: string | null): string => /^([ \t]+)"/m.exec(text ?? '')?.[1] ?? '  ';

const parse = (text: string): { doc: JsonObject } | { problem: string } => {
  if (text.trim() === '') return { doc: {} };
  try {
    const doc: unknown = JSON.parse(text);
    return isJsonObject(doc) ? { doc } : { problem: 'is JSON, but not an object' };
  } catch (error) {
    // Comments and trailing commas (JSONC) land here too: rewriting would drop the comments.
    return { problem: `is not valid JSON (${(error as Error).message})` };
  }
};

/**
 * A JSON file's edit: parse it (a missing or blank file is `{}`), apply `change`, and write it back
 * with the user's keys and order, in their indentation. A file that does not parse is never touched.
 */
export const jsonEdit =
  (change: JsonChange): FileEdit =>
  (current, options) => {
    const parsed = parse(current ?? '');
    if ('problem' in parsed) {
      return {
        kind: 'invalid',
        problem: parsed.problem,
        fix: 'Fix the file (or move it away) and run this again; pulse rewrites only JSON it can parse.',
      };
    }
    const result = change(parsed.doc, options);
    if (result.kind === 'conflict' || result.kind === 'invalid') return result;
    if (result.kind === 'unchanged' && current !== null) return { kind: 'unchanged' };
    const text = `${JSON.stringify(parsed.doc, null, indentOf(current))}\n`;
    return result.kind === 'changed' && result.replaced
      ? { kind: 'write', text, replaced: result.replaced }
      : { kind: 'write', text };
  };
