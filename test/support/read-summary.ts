import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

// The "what is read" table of docs/sources.md is filled from what the tests read: each test
// renders its row from the items it got, and checks that the page holds that row verbatim.

/** One item as the agent or the extractor sees it. */
export interface ReadItem {
  item_id: string;
  title: string;
  starts_at?: string | null;
  url?: string | null;
}

const MAX_ID = 28;

const short = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A table cell: how many items, and the first one's id, title, start and link. */
export const summarizeRead = (items: readonly ReadItem[] | { error: string }): string => {
  if (!Array.isArray(items))
    return `nothing: ${short((items as { error: string }).error, 90).replaceAll('|', '\\|')}`;
  if (items.length === 0) return 'no items';
  const [first] = items as readonly ReadItem[];
  // `<` escaped: a Slack title such as "<!here> …" would otherwise be taken for HTML and vanish.
  const parts = [
    `id \`${short(first!.item_id, MAX_ID)}\``,
    `title "${first!.title.replaceAll('<', '&lt;')}"`,
  ];
  if (first!.starts_at) parts.push(`starts_at ${first!.starts_at}`);
  if (first!.url) parts.push(`url \`${short(first!.url, 48)}\``);
  return `${items.length} item${items.length === 1 ? '' : 's'}; first: ${parts.join(', ')}`;
};

/** A row of the table: what was tested, the shape, and what was read without and with a map. */
export const tableRow = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;

/** A table row with its cells trimmed: the formatter pads the page's tables. */
const normalRow = (line: string) =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim())
    .join(' | ');

/** The rows of `rows` that no table line of `doc` holds, however it is padded. */
export const rowsMissingFrom = (doc: string, rows: readonly string[]): string[] => {
  const present = new Set(
    doc
      .split('\n')
      .filter((line) => line.startsWith('|'))
      .map(normalRow),
  );
  return rows.filter((row) => !present.has(normalRow(row)));
};

const SOURCES_DOC = fileURLToPath(new URL('../../docs/sources.md', import.meta.url));

/** docs/sources.md as it is committed. */
export const sourcesDoc = () => readFile(SOURCES_DOC, 'utf8');
