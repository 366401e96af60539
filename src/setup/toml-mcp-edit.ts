import { parse, type TomlError, type TomlTable } from 'smol-toml';
import type { FileEdit } from './file-edit.js';
import { existingEntry } from './mcp-entry.js';

// smol-toml reads the file (an invalid one is refused) and says what pulse's server is; the text
// is edited by lines, since a parse-and-serialise round trip would drop the user's comments and
// layout: pulse only appends its table, adds the approval line to it, or with --force swaps it.

const PULSE = ['mcp_servers', 'pulse'];

/**
 * Codex asks before each tool of a server unless told otherwise (or the tool's annotations say it
 * is harmless): pulse's server runs its three tools unasked, and no other server gets anything.
 */
const APPROVAL_KEY = 'default_tools_approval_mode';
const APPROVAL_LINE = `${APPROVAL_KEY} = "approve"`;

const tryParse = (text: string): TomlTable | null => {
  try {
    return parse(text);
  } catch {
    return null;
  }
};

const asTable = (value: unknown): TomlTable | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)
    ? (value as TomlTable)
    : undefined;

/** The key path a parsed one-line document names: `[a."b"]` parses to `{a: {b: {}}}`, so ['a', 'b']. */
const pathOf = (doc: TomlTable): string[] => {
  const path: string[] = [];
  let node: unknown = doc;
  for (;;) {
    const table = Array.isArray(node) ? asTable(node[0]) : asTable(node);
    const keys = table === undefined ? [] : Object.keys(table);
    if (keys.length !== 1) return path;
    path.push(keys[0]!);
    node = table![keys[0]!];
  }
};

const startsWith = (path: string[], prefix: string[]) => prefix.every((segment, i) => path[i] === segment);

interface Header {
  index: number;
  path: string[];
}

/** The file's table headers: lines that parse as one, outside any multi-line string or array. */
const headersOf = (lines: string[]): Header[] =>
  lines.flatMap((line, index) => {
    if (!/^\s*\[/.test(line)) return [];
    const header = tryParse(line);
    if (header === null || tryParse(lines.slice(0, index).join('\n')) === null) return [];
    return [{ index, path: pathOf(header) }];
  });

/** The line of the section from `start` to `end` that sets `key` alone on one line. */
const keyLine = (lines: string[], start: number, end: number, key: string): number | undefined => {
  for (let index = start + 1; index < end; index++) {
    const pair = tryParse(lines[index]!);
    if (pair !== null && pathOf(pair).join('.') === key) return index;
  }
  return undefined;
};

const byHand = (problem: string, url: string) =>
  ({
    kind: 'invalid',
    problem,
    fix: `Add the server there by hand (url = "${url}"), or turn it into a [mcp_servers.pulse] table.`,
  }) as const;

/**
 * Codex's `.codex/config.toml`: a `[mcp_servers.pulse]` table with our url and its tools approved,
 * appended to the user's file; an existing table of ours gets the approval line it lacks. Every
 * text written is parsed again and must say what pulse meant, else the user is asked to edit.
 */
export const tomlMcpEdit =
  (url: string): FileEdit =>
  (current, options) => {
    const table = `[mcp_servers.pulse]\nurl = ${JSON.stringify(url)}\n${APPROVAL_LINE}\n`;
    if (current === null || current.trim() === '') return { kind: 'write', text: table };
    let doc: TomlTable;
    try {
      doc = parse(current);
    } catch (error) {
      const { message, line, column } = error as TomlError;
      const reason = message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
      return {
        kind: 'invalid',
        problem: `is not valid TOML (${reason} at line ${line} column ${column})`,
        fix: 'Fix the file (or move it away) and run this again; pulse edits only TOML it can parse.',
      };
    }
    const eol = current.includes('\r\n') ? '\r\n' : '\n';
    const lines = current.split(/\r?\n/);
    const headers = headersOf(lines);
    const servers = doc.mcp_servers;
    const pulse = asTable(servers)?.pulse;
    const definedBy = headers.some((h) => h.path.join('.') === 'mcp_servers')
      ? 'defines the "pulse" server inline under [mcp_servers]'
      : 'defines mcp_servers with a top-level key, not as tables';
    /** The new text, when it parses and gives pulse's server our url with its tools approved. */
    const checked = (text: string, replaced?: string) => {
      const ours = asTable(asTable(tryParse(text)?.mcp_servers)?.pulse);
      if (ours?.url !== url || ours[APPROVAL_KEY] !== 'approve') return byHand(definedBy, url);
      return replaced === undefined
        ? { kind: 'write' as const, text }
        : { kind: 'write' as const, text, replaced };
    };

    if (pulse === undefined) {
      if (servers !== undefined && asTable(servers) === undefined) return byHand(definedBy, url);
      const body = current.endsWith('\n') ? current : `${current}${eol}`;
      return checked(`${body}${eol}${table.replaceAll('\n', eol)}`);
    }
    const existing = asTable(pulse);
    const ours = headers.filter((header) => startsWith(header.path, PULSE));
    if (ours.length === 0) {
      if (existing?.url === url && existing[APPROVAL_KEY] === 'approve') return { kind: 'unchanged' };
      return byHand(definedBy, url);
    }
    const first = ours[0]!;
    const firstEnd = headers.find((header) => header.index > first.index)?.index ?? lines.length;
    const existingUrl = typeof existing?.url === 'string' ? existing.url : undefined;
    if (existingUrl === url) {
      const approval = existing?.[APPROVAL_KEY];
      if (approval === 'approve') return { kind: 'unchanged' };
      if (approval === undefined) {
        const after = keyLine(lines, first.index, firstEnd, 'url') ?? first.index;
        return checked([...lines.slice(0, after + 1), APPROVAL_LINE, ...lines.slice(after + 1)].join(eol));
      }
      const shown = `${APPROVAL_KEY} = ${JSON.stringify(approval)}`;
      if (!options.force) {
        return {
          kind: 'conflict',
          problem: `sets ${shown} for the "pulse" server: Codex would ask before each of pulse's tools, and an agent held by a replan could not acknowledge it unattended`,
          fix: `\`${options.forceCommand}\` sets it to "approve" (after a backup), or set it yourself.`,
        };
      }
      const at = keyLine(lines, first.index, firstEnd, APPROVAL_KEY);
      if (at === undefined) return byHand(definedBy, url);
      return checked(lines.map((line, index) => (index === at ? APPROVAL_LINE : line)).join(eol), shown);
    }
    const sections = ours.map((start) => {
      const next = headers.find((header) => header.index > start.index);
      let end = next?.index ?? lines.length;
      if (next !== undefined && startsWith(next.path, PULSE)) return { start: start.index, end };
      // Blank lines and comments just above the user's next table belong to that table.
      while (end - 1 > start.index && /^\s*(?:#.*)?$/.test(lines[end - 1]!)) end -= 1;
      return { start: start.index, end };
    });
    let text = '';
    const result = existingEntry(existingUrl, url, options, () => {
      // Our table goes where the first of the old ones was; the old ones (and their sub-tables) go.
      const kept = lines.flatMap((line, index) => {
        const section = sections.find(({ start, end }) => index >= start && index < end);
        if (section === undefined) return [line];
        return index === first.index ? table.trimEnd().split('\n') : [];
      });
      text = kept.join(eol);
    });
    if (result.kind === 'changed') return checked(text, result.replaced!);
    return result;
  };
