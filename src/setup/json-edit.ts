import { isDeepStrictEqual } from 'node:util';
import {
  applyEdits as applyTextEdits,
  findNodeAtLocation,
  type JSONPath,
  modify,
  type ParseError,
  parse as parseJsonc,
  parseTree,
  printParseErrorCode,
} from 'jsonc-parser';
import type { ChangeResult, EditOptions, FileEdit } from './file-edit.js';

export type JsonObject = Record<string, unknown>;

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A change to a parsed JSON document, made in place. */
export type JsonChange = (doc: JsonObject, options: EditOptions) => ChangeResult;

// Agents' JSON files are JSONC: VS Code's and Cursor's allow comments and trailing commas.
const JSONC = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true };

/** A user's JSON (comments and trailing commas allowed) as an object, or why it is not one. */
export const parseJsonObject = (text: string): { doc: JsonObject } | { problem: string } => {
  if (text.trim() === '') return { doc: {} };
  const errors: ParseError[] = [];
  const doc: unknown = parseJsonc(text, errors, JSONC);
  const [first] = errors;
  if (first !== undefined) {
    const before = text.slice(0, first.offset).split('\n');
    const where = `line ${before.length} column ${before.at(-1)!.length + 1}`;
    return { problem: `is not valid JSON (${printParseErrorCode(first.error)} at ${where})` };
  }
  return isJsonObject(doc) ? { doc } : { problem: 'is JSON, but not an object' };
};

/** How the user's file is laid out, so that what pulse adds looks like the rest. */
interface Layout {
  /** One level of indentation (two spaces for a new file). */
  unit: string;
  eol: string;
}

const layoutOf = (text: string): Layout => ({
  unit: /^([ \t]+)["/]/m.exec(text)?.[1] ?? '  ',
  eol: text.includes('\r\n') ? '\r\n' : '\n',
});

const splice = (text: string, at: number, length: number, insert: string) =>
  text.slice(0, at) + insert + text.slice(at + length);

const lineStart = (text: string, offset: number) => text.lastIndexOf('\n', offset - 1) + 1;

/** The leading whitespace of the line `offset` is on. */
const indentAt = (text: string, offset: number) => /^[ \t]*/.exec(text.slice(lineStart(text, offset)))![0];

/** A value spread over lines, its inner lines indented from `indent`. */
const block = (value: unknown, indent: string, { unit, eol }: Layout) =>
  JSON.stringify(value, null, unit).replaceAll('\n', eol + indent);

/** A value on one line, spaced as people write it: `{"command": "gh-mcp"}`. */
const inline = (value: unknown) =>
  JSON.stringify(value, null, 1)
    .replace(/([{[])\n\s*/g, '$1')
    .replace(/\n\s*([}\]])/g, '$1')
    .replace(/,\n\s*/g, ', ');

const treeOf = (text: string) => parseTree(text, undefined, JSONC)!;

const remove = (text: string, path: JSONPath) => applyTextEdits(text, modify(text, path, undefined, {}));

/**
 * Sets `path` to `value`, touching only its own text: an existing value is replaced where it is;
 * a new one goes after the container's last entry, on a line of its own when the container spans
 * lines (a comment ending that entry's line stays there), inline when it is written on one line.
 */
const put = (text: string, path: JSONPath, value: unknown, layout: Layout): string => {
  const tree = treeOf(text);
  const existing = findNodeAtLocation(tree, path);
  if (existing !== undefined) {
    const old = text.slice(existing.offset, existing.offset + existing.length);
    const oneLine = (existing.type === 'object' || existing.type === 'array') && !old.includes('\n');
    const rendered = oneLine ? inline(value) : block(value, indentAt(text, existing.offset), layout);
    return splice(text, existing.offset, existing.length, rendered);
  }
  const container = findNodeAtLocation(tree, path.slice(0, -1))!;
  const key = path.at(-1)!;
  const entry = (rendered: string) =>
    container.type === 'object' ? `${JSON.stringify(key)}: ${rendered}` : rendered;
  const close = container.offset + container.length - 1;
  const last = container.children?.at(-1);
  if (last === undefined) {
    const outer = indentAt(text, container.offset);
    const inner = outer + layout.unit;
    const line = `${inner}${entry(block(value, inner, layout))}`;
    const closeLine = lineStart(text, close);
    // `{` and `}` on lines of their own (perhaps with comments between): a line before the `}`.
    if (closeLine > container.offset && text.slice(closeLine, close).trim() === '') {
      return splice(text, closeLine, 0, `${line}${layout.eol}`);
    }
    const inside = text.slice(container.offset + 1, close);
    return inside.trim() === ''
      ? splice(text, container.offset + 1, inside.length, `${layout.eol}${line}${layout.eol}${outer}`)
      : splice(text, container.offset + 1, 0, ` ${entry(inline(value))},`);
  }
  const lastEnd = last.offset + last.length;
  const lineEnd = text.indexOf('\n', lastEnd);
  if (lineEnd === -1 || lineEnd > close) return splice(text, lastEnd, 0, `, ${entry(inline(value))}`);
  const indent = indentAt(text, last.offset);
  const trailingComma = /^\s*,/.test(text.slice(lastEnd, lineEnd));
  const at = text[lineEnd - 1] === '\r' ? lineEnd - 1 : lineEnd;
  const added = `${layout.eol}${indent}${entry(block(value, indent, layout))}${trailingComma ? ',' : ''}`;
  const withEntry = splice(text, at, 0, added);
  return trailingComma ? withEntry : splice(withEntry, lastEnd, 0, ',');
};

/** Rewrites the parts of `text` where `after` differs from `before`, and nothing else. */
const rewrite = (text: string, path: JSONPath, before: unknown, after: unknown, layout: Layout): string => {
  if (isDeepStrictEqual(before, after)) return text;
  let next = text;
  if (isJsonObject(before) && isJsonObject(after)) {
    for (const key of Object.keys(before))
      if (!Object.hasOwn(after, key)) next = remove(next, [...path, key]);
    for (const [key, value] of Object.entries(after)) {
      next = Object.hasOwn(before, key)
        ? rewrite(next, [...path, key], before[key], value, layout)
        : put(next, [...path, key], value, layout);
    }
    return next;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    for (let i = before.length - 1; i >= after.length; i--) next = remove(next, [...path, i]);
    after.forEach((value, i) => {
      next =
        i < before.length
          ? rewrite(next, [...path, i], before[i], value, layout)
          : put(next, [...path, i], value, layout);
    });
    return next;
  }
  return put(next, path, after, layout);
};

/**
 * A JSON file's edit: parse it (comments and trailing commas allowed; a missing or blank file is
 * `{}`), apply `change`, and rewrite only what changed, so the user's comments, order and layout
 * stay as they were. A file that does not parse is never touched.
 */
export const jsonEdit =
  (change: JsonChange): FileEdit =>
  (current, options) => {
    const parsed = parseJsonObject(current ?? '');
    if ('problem' in parsed) {
      return {
        kind: 'invalid',
        problem: parsed.problem,
        fix: 'Fix the file (or move it away) and run this again; pulse edits only JSON it can parse.',
      };
    }
    const doc = structuredClone(parsed.doc);
    const result = change(doc, options);
    if (result.kind === 'conflict' || result.kind === 'invalid') return result;
    if (result.kind === 'unchanged' && current !== null) return { kind: 'unchanged' };
    const layout = layoutOf(current ?? '');
    const text =
      current === null || current.trim() === ''
        ? `${JSON.stringify(doc, null, layout.unit)}\n`
        : rewrite(current, [], parsed.doc, doc, layout);
    return result.kind === 'changed' && result.replaced
      ? { kind: 'write', text, replaced: result.replaced }
      : { kind: 'write', text };
  };
