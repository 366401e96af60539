import type { FileEdit } from './file-edit.js';
import { existingEntry } from './mcp-entry.js';

// No TOML library is a dependency, and a parse-and-serialize round trip would drop the user's
// comments and layout anyway: this reads just enough of the file to find an existing pulse server,
// and only ever appends (or, with --force, swaps) the one table.

const PULSE = ['mcp_servers', 'pulse'];

interface TomlLine {
  index: number;
  /** The header's key path, for a `[table]` line. */
  header?: string[];
  /** The table the line is in, and its key path, for a `key = value` line. */
  table?: string[];
  key?: string[];
  value?: string;
}

const SEGMENT = /\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*/y;

/** `a."b".c` as ['a', 'b', 'c']; null for anything else. */
const keyPath = (text: string): string[] | null => {
  const path: string[] = [];
  let at = 0;
  for (;;) {
    SEGMENT.lastIndex = at;
    const match = SEGMENT.exec(text);
    if (!match) return null;
    path.push(match[1] ?? match[2] ?? match[3] ?? '');
    at = SEGMENT.lastIndex;
    if (at === text.length) return path;
    if (text[at] !== '.') return null;
    at += 1;
  }
};

const startsWith = (path: string[] | undefined, prefix: string[]) =>
  path !== undefined && prefix.every((segment, i) => path[i] === segment);

const sameKey = (a: string[] | undefined, b: string[]) => a?.length === b.length && startsWith(a, b);

/** Table headers and top-level key lines, skipping the inside of multi-line strings. */
const scan = (lines: string[]): TomlLine[] => {
  const found: TomlLine[] = [];
  let table: string[] = [];
  let closing: string | null = null;
  lines.forEach((line, index) => {
    if (closing !== null) {
      if (line.includes(closing)) closing = null;
      return;
    }
    const header = /^\s*\[([^[\]]+)\]\s*(?:#.*)?$/.exec(line);
    if (header) {
      table = keyPath(header[1]!) ?? ['?'];
      found.push({ index, header: table });
      return;
    }
    const pair = /^\s*([A-Za-z0-9_"'.\s-]+?)\s*=\s*(.*)$/.exec(line);
    if (!pair) return;
    const value = pair[2]!;
    const opener = /^("""|''')/.exec(value)?.[1];
    if (opener && !value.slice(3).includes(opener)) closing = opener;
    found.push({ index, table, key: keyPath(pair[1]!) ?? ['?'], value });
  });
  return found;
};

/** The string in `"…"` or `'…'` at the start of a TOML value (escapes are not expected in a url). */
const stringValue = (value: string | undefined): string | undefined =>
  /^(?:"([^"\\]*)"|'([^']*)')/
    .exec(value ?? '')
    ?.slice(1)
    .find((part) => part !== undefined);

const byHand = (problem: string, url: string) =>
  ({
    kind: 'invalid',
    problem,
    fix: `Add the server there by hand (url = "${url}"), or turn it into a [mcp_servers.pulse] table.`,
  }) as const;

/**
 * Codex asks before each tool of a server unless told otherwise (or the tool's annotations say it
 * is harmless): pulse's server runs its three tools unasked, and no other server gets anything.
 */
const APPROVAL_KEY = 'default_tools_approval_mode';
const APPROVAL_LINE = `${APPROVAL_KEY} = "approve"`;

/**
 * Codex's `.codex/config.toml`: a `[mcp_servers.pulse]` table with our url and its tools approved,
 * appended to the user's file; an existing table of ours gets the approval line it lacks.
 */
export const tomlMcpEdit =
  (url: string): FileEdit =>
  (current, options) => {
    const table = `[mcp_servers.pulse]\nurl = ${JSON.stringify(url)}\n${APPROVAL_LINE}\n`;
    if (current === null || current.trim() === '') return { kind: 'write', text: table };
    const eol = current.includes('\r\n') ? '\r\n' : '\n';
    const lines = current.split(/\r?\n/);
    const found = scan(lines);
    const rootKey = found.find((line) => sameKey(line.table, []) && line.key?.[0] === 'mcp_servers');
    if (rootKey) return byHand('defines mcp_servers with a top-level key, not as tables', url);
    const inline = found.find((line) => sameKey(line.table, ['mcp_servers']) && line.key?.[0] === 'pulse');
    if (inline) {
      const inlineUrl = /\burl\s*=\s*("[^"]*"|'[^']*')/.exec(inline.value ?? '')?.[1];
      const approved = new RegExp(`\\b${APPROVAL_KEY}\\s*=\\s*["']approve["']`).test(inline.value ?? '');
      if (stringValue(inlineUrl) === url && inline.key?.length === 1 && approved)
        return { kind: 'unchanged' };
      return byHand('defines the "pulse" server inline under [mcp_servers]', url);
    }
    const headers = found.filter((line) => line.header !== undefined);
    const ours = headers.filter((line) => startsWith(line.header, PULSE));
    if (ours.length === 0) {
      const body = current.endsWith('\n') ? current : `${current}${eol}`;
      return { kind: 'write', text: `${body}${eol}${table.replaceAll('\n', eol)}` };
    }
    const urlLine = found.find((line) => sameKey(line.table, PULSE) && sameKey(line.key, ['url']));
    const sections = ours.map((start) => {
      const next = headers.find((line) => line.index > start.index);
      let end = next?.index ?? lines.length;
      if (startsWith(next?.header, PULSE)) return { start: start.index, end };
      // Blank lines and comments just above the user's next table belong to that table.
      while (end - 1 > start.index && /^\s*(?:#.*)?$/.test(lines[end - 1]!)) end -= 1;
      return { start: start.index, end };
    });
    if (stringValue(urlLine?.value) === url) {
      const approval = found.find((line) => sameKey(line.table, PULSE) && sameKey(line.key, [APPROVAL_KEY]));
      if (approval === undefined) {
        const text = [
          ...lines.slice(0, urlLine!.index + 1),
          APPROVAL_LINE,
          ...lines.slice(urlLine!.index + 1),
        ];
        return { kind: 'write', text: text.join(eol) };
      }
      if (stringValue(approval.value) === 'approve') return { kind: 'unchanged' };
      if (!options.force) {
        return {
          kind: 'conflict',
          problem: `sets ${APPROVAL_KEY} = ${approval.value?.trim()} for the "pulse" server: Codex would ask before each of pulse's tools, and an agent held by a replan could not acknowledge it unattended`,
          fix: `\`${options.forceCommand}\` sets it to "approve" (after a backup), or set it yourself.`,
        };
      }
      const text = lines.map((line, index) => (index === approval.index ? APPROVAL_LINE : line));
      return { kind: 'write', text: text.join(eol), replaced: `${APPROVAL_KEY} = ${approval.value?.trim()}` };
    }
    let text = '';
    const result = existingEntry(stringValue(urlLine?.value), url, options, () => {
      // Our table goes where the first of the old ones was; the old ones (and their sub-tables) go.
      const kept = lines.flatMap((line, index) => {
        const section = sections.find(({ start, end }) => index >= start && index < end);
        if (section === undefined) return [line];
        return index === sections[0]!.start ? table.trimEnd().split('\n') : [];
      });
      text = kept.join(eol);
    });
    if (result.kind === 'changed') return { kind: 'write', text, replaced: result.replaced! };
    return result;
  };
