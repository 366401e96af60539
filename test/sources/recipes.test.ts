import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import type { InboxEvent } from '../../machines/external.js';
import type { SourceConfig } from '../../src/sources/config/config.js';
import { parseSourcesConfig } from '../../src/sources/config/parse-config.js';
import { type ExtractedItem, extractItems } from '../../src/sources/items/extract.js';
import { readingOf } from '../../src/sources/items/reading.js';
import { createRuleThinker } from '../../src/thinkers/rule-thinker.js';
import {
  type ReadItem,
  rowsMissingFrom,
  sourcesDoc,
  summarizeRead,
  tableRow,
} from '../support/read-summary.js';

/*
 * The documented answers of the MCP servers users connect most, each read without a map and
 * with the recipe docs/sources.md gives for it. The recipes are read from the page itself, so
 * what a user copies is what was tested; the page's table must hold each row as read here.
 */

interface Shape {
  tested: string;
  shape: string;
  as: 'text' | 'structured';
  answer: unknown;
}

const loadShape = async (name: string): Promise<Shape> =>
  JSON.parse(await readFile(new URL(`../fixtures/shapes/${name}.json`, import.meta.url), 'utf8'));

const resultOf = ({ as, answer }: Shape) =>
  as === 'text'
    ? { content: [{ type: 'text', text: JSON.stringify(answer) }] }
    : { content: [{ type: 'text', text: JSON.stringify(answer) }], structuredContent: answer };

/** The source of the recipe after `<!-- recipe: NAME -->` in docs/sources.md, parsed as pulse parses it. */
const recipeIn = (doc: string, name: string): SourceConfig => {
  const match = new RegExp(`<!-- recipe: ${name} -->\\s*\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
  if (match === null) throw new Error(`docs/sources.md has no recipe "${name}"`);
  const source = JSON.parse(match[1]!) as { server: string };
  const config = parseSourcesConfig(
    JSON.stringify({ mcpServers: { [source.server]: { command: 'server' } }, sources: [source] }),
    { file: 'docs/sources.md', env: {} },
  );
  expect(config.warnings, `recipe ${name}`).toEqual([]);
  return config.sources[0]!;
};

type Row = [itemId: string, title: string, startsAt: string | null, url: string | null];

const rows = (items: readonly ExtractedItem[]): Row[] =>
  items.map((item) => [item.itemId, item.title, item.startsAt, item.url]);

const asRead = (items: readonly ExtractedItem[]): ReadItem[] =>
  items.map((item) => ({ item_id: item.itemId, title: item.title, starts_at: item.startsAt, url: item.url }));

const readWithout = (shape: Shape): ReadItem[] | { error: string } => {
  try {
    return asRead(extractItems(resultOf(shape)));
  } catch (error) {
    return { error: (error as Error).message };
  }
};

const NOW = Date.parse('2026-03-02T08:20:00Z');

const urgencies = async (source: SourceConfig, items: readonly ExtractedItem[]) => {
  const events: InboxEvent[] = items.map((item) => ({
    id: item.itemId,
    source: source.name,
    item_id: item.itemId,
    title: item.title,
    starts_at: item.startsAt,
    url: item.url,
    detail: null,
    fields: item.fields,
    received_at: new Date(NOW).toISOString(),
    attempts: 0,
  }));
  return (await createRuleThinker([source]).think(events, NOW)).map((judgement) => judgement.urgency);
};

interface Case {
  name: string;
  /** The first item read without a map, or the start of the error. */
  without: Row | RegExp;
  /** Every item read with the recipe. */
  with: Row[];
  /** Their urgencies by the recipe's rules, at 2026-03-02T08:20:00Z. */
  urgencies: number[];
}

const CASES: Case[] = [
  {
    name: 'github-notifications',
    without: [
      '14301297364',
      'Add retry to the uploader',
      null,
      'https://api.github.com/notifications/threads/14301297364',
    ],
    with: [
      ['14301297364', 'Add retry to the uploader', null, 'https://github.com/octo/app'],
      ['14301297365', 'Nightly build failed', null, 'https://github.com/octo/app'],
    ],
    urgencies: [0.9, 0.3],
  },
  {
    name: 'github-issues',
    without: ['2941011', 'Uploads time out on slow links', null, 'https://github.com/octo/app/issues/1347'],
    with: [
      [
        'https://api.github.com/repos/octo/app:1347',
        'Uploads time out on slow links',
        null,
        'https://github.com/octo/app/issues/1347',
      ],
      [
        'https://api.github.com/repos/octo/app:1348',
        'Typo in the README',
        null,
        'https://github.com/octo/app/issues/1348',
      ],
    ],
    urgencies: [1, 0.4],
  },
  {
    name: 'google-calendar',
    without: [
      '5q1n0bq6kk0dsh1hbd9o7g0ukg',
      'Design review',
      '2026-03-02T08:30:00.000Z',
      'https://www.google.com/calendar/event?eid=NXExbjBicTZra',
    ],
    with: [
      [
        '5q1n0bq6kk0dsh1hbd9o7g0ukg',
        'Design review',
        '2026-03-02T08:30:00.000Z',
        'https://www.google.com/calendar/event?eid=NXExbjBicTZra',
      ],
      [
        '2u5g8bq6kk0dsh1hbd9o7g0abc',
        'Offsite',
        '2026-03-05T00:00:00.000Z',
        'https://www.google.com/calendar/event?eid=MnU1ZzhicTZr',
      ],
    ],
    urgencies: [0.9, 0.4],
  },
  {
    name: 'gmail',
    without: ['18e0c1f2a3b4c5d6', 'Deploy blocked', '2026-03-01T09:00:00.000Z', null],
    with: [
      ['18e0c1f2a3b4c5d6', 'Deploy blocked', '2026-03-01T09:00:00.000Z', null],
      ['18e0c1f2a3b4c5d7', 'Spring sale', '2026-03-01T08:00:00.000Z', null],
    ],
    urgencies: [0.8, 0.3],
  },
  {
    name: 'jira-rest',
    without: ['10042', 'Database disk at 95%', null, null],
    with: [
      ['OPS-17', 'Database disk at 95%', '2026-03-02T00:00:00.000Z', null],
      ['OPS-18', 'Rotate the staging certificates', null, null],
    ],
    urgencies: [0.9, 0.4],
  },
  {
    name: 'jira-mcp-atlassian',
    without: ['10042', 'Database disk at 95%', null, 'https://example.atlassian.net/browse/OPS-17'],
    with: [
      [
        'OPS-17',
        'Database disk at 95%',
        '2026-03-02T00:00:00.000Z',
        'https://example.atlassian.net/browse/OPS-17',
      ],
      ['OPS-18', 'Rotate the staging certificates', null, 'https://example.atlassian.net/browse/OPS-18'],
    ],
    urgencies: [0.9, 0.4],
  },
  {
    name: 'linear',
    without: /^no list found: 1 content block: text \(JSON: an object with keys data\)/,
    with: [
      [
        'ENG-412',
        'Checkout fails for saved cards',
        '2026-03-03T00:00:00.000Z',
        'https://linear.app/acme/issue/ENG-412/checkout-fails-for-saved-cards',
      ],
      [
        'ENG-413',
        'Tidy the settings page',
        null,
        'https://linear.app/acme/issue/ENG-413/tidy-the-settings-page',
      ],
    ],
    urgencies: [0.9, 0.3],
  },
  {
    name: 'sentry',
    without: [
      '4509812345',
      "TypeError: Cannot read properties of undefined (reading 'total')",
      null,
      'https://acme.sentry.io/issues/4509812345/',
    ],
    with: [
      [
        'WEB-3F2',
        "TypeError: Cannot read properties of undefined (reading 'total')",
        null,
        'https://acme.sentry.io/issues/4509812345/',
      ],
      ['WEB-3F3', 'ResizeObserver loop limit exceeded', null, 'https://acme.sentry.io/issues/4509812346/'],
    ],
    urgencies: [0.9, 0.3],
  },
  {
    name: 'slack',
    // No id field: the hash of the message's JSON, which changes when someone reacts to it.
    without: [
      expect.stringMatching(/^[0-9a-f]{64}$/),
      '<!here> prod deploy is rolling back, hold merges',
      null,
      null,
    ],
    with: [
      ['1772355600.000200', '<!here> prod deploy is rolling back, hold merges', null, null],
      ['1772352000.000100', 'lunch at 12:30?', null, null],
    ],
    urgencies: [0.9, 0.2],
  },
];

describe('recipes for the servers users connect most', () => {
  let doc: string;

  beforeAll(async () => {
    doc = await sourcesDoc();
  });

  describe.each(CASES)('$name', (testCase) => {
    let shape: Shape;
    let recipe: SourceConfig;

    beforeAll(async () => {
      shape = await loadShape(testCase.name);
      recipe = recipeIn(doc, testCase.name);
    });

    it('is read without a map as the conventions say', () => {
      const read = readWithout(shape);
      if (testCase.without instanceof RegExp) {
        expect('error' in read ? read.error : 'items were read').toMatch(testCase.without);
        return;
      }
      const [first] = read as ReadItem[];
      expect([first!.item_id, first!.title, first!.starts_at, first!.url]).toEqual(testCase.without);
    });

    it('is read with the recipe of docs/sources.md, and its rules give the urgencies', async () => {
      const items = extractItems(resultOf(shape), readingOf(recipe));
      expect(rows(items)).toEqual(testCase.with);
      expect(await urgencies(recipe, items)).toEqual(testCase.urgencies);
    });

    it('has its row in the table of docs/sources.md', () => {
      const mapped = asRead(extractItems(resultOf(shape), readingOf(recipe)));
      const row = tableRow([
        shape.tested,
        shape.shape,
        summarizeRead(readWithout(shape)),
        `${summarizeRead(mapped)} with [the recipe](#${testCase.name})`,
      ]);
      expect(rowsMissingFrom(doc, [row]), 'the row docs/sources.md should have').toEqual([]);
    });
  });
});
