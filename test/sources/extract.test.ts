import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ItemMap } from '../../src/sources/config/config.js';
import { canonicalJson } from '../../src/sources/items/canonical-json.js';
import { ExtractError, extractItems } from '../../src/sources/items/extract.js';

const structured = (content: Record<string, unknown>) => ({ content: [], structuredContent: content });
const text = (...texts: string[]) => ({ content: texts.map((t) => ({ type: 'text', text: t })) });
const first = (item: unknown) => extractItems(structured({ items: [item] }))[0]!;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

const extractError = (result: unknown): ExtractError => {
  try {
    extractItems(result);
  } catch (error) {
    expect(error).toBeInstanceOf(ExtractError);
    return error as ExtractError;
  }
  throw new Error('expected an ExtractError, but nothing was thrown');
};

describe('extractItems: where the list is', () => {
  it.each(['items', 'events', 'messages', 'results', 'data'])(
    'reads the list from structuredContent.%s',
    (field) => {
      expect(extractItems(structured({ [field]: [{ id: 'a' }] })).map((item) => item.itemId)).toEqual(['a']);
    },
  );

  it('takes the first field in the order items, events, messages, results, data', () => {
    const result = structured({
      data: [{ id: 'data' }],
      events: [{ id: 'events' }],
      results: [{ id: 'results' }],
    });
    expect(extractItems(result)[0]?.itemId).toBe('events');
  });

  it('passes over a list field that is not an array', () => {
    expect(extractItems(structured({ items: { count: 2 }, messages: [{ id: 'm' }] }))[0]?.itemId).toBe('m');
  });

  it('reads an object with a list field from a text block of JSON', () => {
    expect(extractItems(text(JSON.stringify({ messages: [{ id: 'm1' }, { id: 'm2' }] }))).length).toBe(2);
  });

  it('reads a top-level JSON array in a text block as the list', () => {
    expect(extractItems(text('  [{"id": 1}, {"id": 2}]')).map((item) => item.itemId)).toEqual(['1', '2']);
  });

  it('passes over text blocks that are prose or JSON without a list, and reads the next one', () => {
    const result = {
      content: [
        { type: 'text', text: 'Here are your events:' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'text', text: '{"count": 1}' },
        { type: 'text', text: '{"events": [{"id": "e"}]}' },
      ],
    };
    expect(extractItems(result)[0]?.itemId).toBe('e');
  });

  it('prefers structuredContent to the text blocks', () => {
    const result = {
      ...text('[{"id": "from-text"}]'),
      structuredContent: { items: [{ id: 'from-structured' }] },
    };
    expect(extractItems(result)[0]?.itemId).toBe('from-structured');
  });

  it('falls back to the text blocks when structuredContent has no list', () => {
    const result = { ...text('[{"id": "from-text"}]'), structuredContent: { count: 1 } };
    expect(extractItems(result)[0]?.itemId).toBe('from-text');
  });

  it('returns no items for an empty list', () => {
    expect(extractItems(structured({ items: [] }))).toEqual([]);
  });
});

describe('extractItems: failures', () => {
  it('fails on isError with the first text of the result', () => {
    const error = extractError({
      isError: true,
      content: [{ type: 'text', text: 'calendar API\nquota exceeded' }],
    });
    expect(error.name).toBe('ExtractError');
    expect(error.message).toBe('the tool answered isError: calendar API quota exceeded');
  });

  it('fails on isError even when the result also carries a list', () => {
    expect(extractError({ isError: true, structuredContent: { items: [{ id: 'a' }] } }).message).toBe(
      'the tool answered isError: (no text)',
    );
  });

  it('says what it found instead of a list: the keys of structuredContent and each block, and the fix', () => {
    const error = extractError({
      content: [
        { type: 'text', text: 'not json' },
        { type: 'text', text: '{"count": 3}' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
      structuredContent: { count: 3, next: null },
    });
    expect(error.message).toBe(
      'no list found: structuredContent is an object with keys count, next; 3 content blocks: text (not JSON), text (JSON: an object with keys count), image. pulse looks for a JSON array, a field items, events, messages, results, data, result, or the first list of objects; add "map": {"items": "<path to the list>"} to the source (docs/sources.md#map)',
    );
  });

  it('fails on a text block that looks like JSON but does not parse', () => {
    expect(extractError(text('{"items": [')).message).toMatch(/^no list found/);
  });

  it.each([null, undefined, 42, 'text', [{ id: 'a' }]])(
    'fails on a result that is not an object: %j',
    (result) => {
      expect(extractError(result).message).toMatch(/^the tool result is not an object/);
    },
  );

  it('fails on a result without content or structuredContent', () => {
    expect(extractError({}).message).toMatch(/^no list found/);
  });
});

describe('extractItems: item ids', () => {
  it('takes the first of id, uid, eventId, messageId, threadId', () => {
    expect(first({ threadId: 't', messageId: 'm', eventId: 'e', uid: 'u', id: 'i' }).itemId).toBe('i');
    expect(first({ threadId: 't', messageId: 'm', eventId: 'e', uid: 'u' }).itemId).toBe('u');
    expect(first({ threadId: 't', messageId: 'm', eventId: 'e' }).itemId).toBe('e');
    expect(first({ threadId: 't', messageId: 'm' }).itemId).toBe('m');
    expect(first({ threadId: 't' }).itemId).toBe('t');
  });

  it('turns a numeric id into a string', () => {
    expect(first({ id: 42 }).itemId).toBe('42');
  });

  it('passes over an empty, boolean or object id to the next field', () => {
    expect(first({ id: '', uid: 'u' }).itemId).toBe('u');
    expect(first({ id: true, uid: { x: 1 }, eventId: 'e' }).itemId).toBe('e');
  });

  it('hashes the canonical JSON of an item without an id, whatever the order of its keys', () => {
    const a = first({ title: 'Standup', when: { b: 2, a: 1 } });
    const b = first({ when: { a: 1, b: 2 }, title: 'Standup' });
    expect(a.itemId).toBe(sha256('{"title":"Standup","when":{"a":1,"b":2}}'));
    expect(b.itemId).toBe(a.itemId);
    expect(first({ title: 'Standup', when: { a: 1, b: 3 } }).itemId).not.toBe(a.itemId);
  });

  it('hashes a huge id, so the seen store stays small, and keeps it stable', () => {
    const id = 'x'.repeat(10_000);
    expect(first({ id }).itemId).toBe(`sha256:${sha256(id)}`);
  });
});

describe('extractItems: titles', () => {
  it('takes the first of title, summary, subject, name, description that is a non-empty string', () => {
    expect(first({ description: 'd', name: 'n', subject: 's', summary: 'su', title: 't' }).title).toBe('t');
    expect(first({ description: 'd', name: 'n', subject: 's', summary: 'su' }).title).toBe('su');
    expect(first({ description: 'd', name: 'n', subject: 's' }).title).toBe('s');
    expect(first({ description: 'd', name: 'n' }).title).toBe('n');
    expect(first({ description: 'd' }).title).toBe('d');
  });

  it('passes over empty, blank and non-string titles', () => {
    expect(first({ title: '', summary: '  \n ', subject: 7, name: 'Name' }).title).toBe('Name');
  });

  it('says (untitled) when no title field holds text', () => {
    expect(first({ id: 'a' }).title).toBe('(untitled)');
  });

  it('puts a title on one line and cuts a huge one to 300 characters', () => {
    expect(first({ title: ' Re:\n  budget\tQ3 ' }).title).toBe('Re: budget Q3');
    expect(first({ title: 'y'.repeat(5_000_000) }).title).toBe('y'.repeat(300));
  });
});

describe('extractItems: start times', () => {
  it.each(['start', 'startsAt', 'start_time', 'startTime', 'starts_at', 'date'])(
    'reads %s as the start, as an ISO string',
    (field) => {
      expect(first({ [field]: '2025-07-01T10:00:00+02:00' }).startsAt).toBe('2025-07-01T08:00:00.000Z');
    },
  );

  it('reads Google Calendar start objects: dateTime for timed events, date for all-day ones', () => {
    expect(first({ start: { dateTime: '2025-07-01T10:00:00Z', timeZone: 'UTC' } }).startsAt).toBe(
      '2025-07-01T10:00:00.000Z',
    );
    expect(first({ start: { date: '2025-07-02' } }).startsAt).toBe('2025-07-02T00:00:00.000Z');
  });

  it('reads the dates of mail headers', () => {
    expect(first({ date: 'Tue, 1 Jul 2025 10:00:00 +0000' }).startsAt).toBe('2025-07-01T10:00:00.000Z');
  });

  it('passes over a field that does not parse as a date to the next one', () => {
    expect(
      first({ start: 'soon', startsAt: { dateTime: 'later' }, start_time: '2025-07-01T10:00:00Z' }).startsAt,
    ).toBe('2025-07-01T10:00:00.000Z');
  });

  it('is null without a start, and for strings Date.parse would stretch into a date', () => {
    expect(first({ id: 'a' }).startsAt).toBeNull();
    expect(first({ start: '1' }).startsAt).toBeNull();
    expect(first({ start: 'March 7' }).startsAt).toBeNull();
    expect(first({ start: 1_751_364_000_000 }).startsAt).toBeNull();
    expect(first({ start: `2025-07-01${' '.repeat(1_000_000)}` }).startsAt).toBeNull();
  });
});

describe('extractItems: detail', () => {
  it("is the item's JSON in the source's order, nested keys sorted", () => {
    expect(first({ z: 1, a: { y: [true, null], b: 'x' } }).detail).toBe(
      '{"z":1,"a":{"b":"x","y":[true,null]}}',
    );
  });

  it("puts a calendar event's summary and start first, so a cut at 500 characters keeps them", () => {
    const attendees = Array.from({ length: 30 }, (_, i) => ({ email: `person${i}@example.com` }));
    const event = {
      attendees,
      creator: { email: 'a@example.com' },
      etag: '"3181161784712000"',
      id: 'evt1',
      summary: 'Design review',
      description: 'Bring the mockups',
      start: { dateTime: '2026-03-01T09:30:00Z' },
    };
    const detail = first(event).detail;
    expect(detail).toHaveLength(500);
    expect(detail).toMatch(
      /^\{"summary":"Design review","start":\{"dateTime":"2026-03-01T09:30:00Z"\},"description":"Bring the mockups","attendees":\[/,
    );
  });

  it('puts the mapped title, start and detail first, under their paths, and leaves them out of the rest', () => {
    const item = { id: 1, meta: { x: 1 }, fields: { summary: 'Login fails', body: 'Stack trace', other: 2 } };
    const [read] = extractItems(structured({ items: [item] }), {
      map: { title: 'fields.summary', detail: 'fields.body' },
    });
    expect(read!.detail).toBe(
      '{"fields.summary":"Login fails","fields.body":"Stack trace","id":1,"meta":{"x":1},"fields":{"other":2}}',
    );
  });

  it('is cut to 500 characters', () => {
    const item = first({ id: 'a', body: 'b'.repeat(10_000_000) });
    expect(item.detail).toHaveLength(500);
    expect(item.detail.startsWith('{"body":"bbb')).toBe(true);
  });

  it('does not end on half of a surrogate pair', () => {
    const detail = first({ a: `${'x'.repeat(489)}😀😀😀😀😀😀` }).detail;
    expect(detail.length).toBeLessThanOrEqual(500);
    expect(/[\uD800-\uDBFF]$/.test(detail)).toBe(false);
  });
});

describe('extractItems: garbage', () => {
  it('skips items that are not objects', () => {
    const items = extractItems(
      structured({ items: [null, 3, 'x', true, [{ id: 'nested' }], { id: 'kept' }] }),
    );
    expect(items.map((item) => item.itemId)).toEqual(['kept']);
  });

  it('takes at most 10,000 items from one result', () => {
    const list = Array.from({ length: 12_000 }, (_, index) => ({ id: index }));
    const items = extractItems(structured({ items: list }));
    expect(items).toHaveLength(10_000);
    expect(items.at(-1)?.itemId).toBe('9999');
  });

  it('survives nesting 100,000 levels deep, replacing what is below 64 levels by a marker', () => {
    let deep: unknown = 'bottom';
    for (let level = 0; level < 100_000; level++) deep = { d: deep };
    const item = first({ title: 'deep', nested: deep });
    expect(item.title).toBe('deep');
    expect(canonicalJson({ nested: deep })).toContain('"[nested too deep]"');
    expect(canonicalJson({ nested: deep })).not.toContain('bottom');
  });

  it('survives deep nesting parsed from a text block', () => {
    const json = `[{"id": "a", "x": ${'['.repeat(50_000)}${']'.repeat(50_000)}}]`;
    expect(extractItems(text(json))[0]?.itemId).toBe('a');
  });

  it('marks a circular reference instead of looping', () => {
    const item: Record<string, unknown> = { title: 'loop' };
    item.self = item;
    expect(first(item).detail).toBe('{"title":"loop","self":{"self":"[circular]","title":"loop"}}');
    expect(canonicalJson(item)).toBe('{"self":"[circular]","title":"loop"}');
  });

  it('writes values JSON has no form for as JSON.stringify would', () => {
    expect(canonicalJson({ a: undefined, b: () => 1, c: [undefined, Number.NaN], d: 10n })).toBe(
      '{"c":[null,null],"d":"10"}',
    );
  });
});

describe('extractItems: real shapes, without a map', () => {
  const ids = (result: unknown) => extractItems(result).map((item) => item.itemId);
  const titles = (result: unknown) => extractItems(result).map((item) => item.title);

  it("reads the Python SDK's list: structuredContent {result: […]} and one text block per element", () => {
    const events = [
      { id: 'a', title: 'Standup' },
      { id: 'b', title: 'Retro' },
    ];
    const result = {
      content: events.map((event) => ({ type: 'text', text: JSON.stringify(event, null, 2) })),
      structuredContent: { result: events },
    };
    expect(titles(result)).toEqual(['Standup', 'Retro']);
  });

  it('reads several text blocks that are each one JSON object as one item each (a Python SDK list without output schema)', () => {
    // Each element holds a list of objects of its own: those are not the list.
    const result = text(
      '{"id": "a", "title": "Standup", "labels": [{"name": "team"}]}',
      '{"id": "b", "title": "Retro", "labels": [{"name": "team"}]}',
    );
    expect(ids(result)).toEqual(['a', 'b']);
  });

  it("reads a single JSON object with an id as one item, and a JSON list's one element the same", () => {
    expect(ids(text('{"id": "only", "title": "Standup"}'))).toEqual(['only']);
  });

  it('reads an empty content list as no items, not as an error', () => {
    expect(extractItems({ content: [] })).toEqual([]);
  });

  it('reads resource_link blocks: id and url the uri, title the title or name', () => {
    const result = {
      content: [
        { type: 'text', text: 'Here are 2 resource links:' },
        { type: 'resource_link', uri: 'demo://resource/1', name: 'resource-1', description: 'First' },
        { type: 'resource_link', uri: 'demo://resource/2', name: 'resource-2', title: 'Second resource' },
      ],
    };
    expect(extractItems(result).map(({ itemId, title, url }) => ({ itemId, title, url }))).toEqual([
      { itemId: 'demo://resource/1', title: 'resource-1', url: 'demo://resource/1' },
      { itemId: 'demo://resource/2', title: 'Second resource', url: 'demo://resource/2' },
    ]);
  });

  it('reads embedded resource blocks, leaving their binary blob out', () => {
    const result = {
      content: [
        {
          type: 'resource',
          resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'Buy milk\nand eggs' },
        },
        {
          type: 'resource',
          resource: { uri: 'file:///logo.png', mimeType: 'image/png', blob: 'A'.repeat(10_000) },
        },
      ],
    };
    const items = extractItems(result);
    expect(items.map(({ itemId, title }) => ({ itemId, title }))).toEqual([
      { itemId: 'file:///notes.txt', title: 'Buy milk and eggs' },
      { itemId: 'file:///logo.png', title: '(untitled)' },
    ]);
    expect(items[1]!.detail).not.toContain('AAAA');
  });

  it("takes the first list of objects when no conventional field holds one (server-memory's entities)", () => {
    const graph = {
      entities: [
        { name: 'Alice', entityType: 'person', observations: ['likes tea'] },
        { name: 'Pulse', entityType: 'project', observations: [] },
      ],
      relations: [{ from: 'Alice', to: 'Pulse', relationType: 'works on' }],
    };
    const result = { structuredContent: graph, ...text(JSON.stringify(graph)) };
    expect(extractItems(result).map(({ itemId, title }) => ({ itemId, title }))).toEqual([
      { itemId: 'Alice', title: 'Alice' },
      { itemId: 'Pulse', title: 'Pulse' },
    ]);
  });

  it("finds a list inside one text block's object (taskmanager's requests) and takes requestId as the id", () => {
    const answer = {
      status: 'requests_listed',
      message: 'Current requests in the system: …',
      requests: [{ requestId: 'req-1', originalRequest: 'Ship the release', totalTasks: 2 }],
    };
    expect(ids(text(JSON.stringify(answer, null, 2)))).toEqual(['req-1']);
  });

  it('prefers a conventional field to the first list of objects, and skips an empty list for a full one', () => {
    expect(ids(structured({ attendees: [{ id: 'x' }], events: [{ id: 'e' }] }))).toEqual(['e']);
    expect(ids(structured({ warnings: [], requests: [{ requestId: 'r' }] }))).toEqual(['r']);
    expect(extractItems(structured({ entities: [], count: 0 }))).toEqual([]);
  });

  it('unwraps {"data": {…}} and {"result": {…}} one level', () => {
    expect(ids(structured({ data: { issues: [{ id: 'i' }] } }))).toEqual(['i']);
    expect(ids(structured({ result: { events: [{ id: 'e' }] } }))).toEqual(['e']);
  });

  it('reads titles in nested conventional places: subject.title, fields.summary, a mail Subject header', () => {
    expect(first({ id: 1, subject: { title: 'Fix the flaky test', type: 'PullRequest' } }).title).toBe(
      'Fix the flaky test',
    );
    expect(first({ id: 2, key: 'OPS-7', fields: { summary: 'Disk full on db-2' } }).title).toBe(
      'Disk full on db-2',
    );
    const mail = {
      id: 'm',
      payload: {
        headers: [
          { name: 'From', value: 'ops@example.com' },
          { name: 'Subject', value: 'Pager: disk full' },
          { name: 'Date', value: 'Tue, 1 Jul 2025 10:00:00 +0000' },
        ],
      },
    };
    expect(first(mail)).toMatchObject({ title: 'Pager: disk full', startsAt: '2025-07-01T10:00:00.000Z' });
  });

  it('takes key and requestId as ids, and a numeric id as text', () => {
    expect(first({ key: 'OPS-7' }).itemId).toBe('OPS-7');
    expect(first({ requestId: 'req-3' }).itemId).toBe('req-3');
    expect(first({ id: 10_001, key: 'OPS-7' }).itemId).toBe('10001');
  });

  it('takes name as the id only when names are unique in the list; else the hash', () => {
    expect(ids(structured({ items: [{ name: 'a' }, { name: 'b' }] }))).toEqual(['a', 'b']);
    const twins = ids(
      structured({
        items: [
          { name: 'a', n: 1 },
          { name: 'a', n: 2 },
        ],
      }),
    );
    expect(twins[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(twins[1]).not.toBe(twins[0]);
  });

  it('reads a link from html_url, htmlLink, permalink, url…, only when it is an absolute URL', () => {
    expect(
      first({ id: 1, html_url: 'https://github.com/o/r/issues/1', url: 'https://api.github.com/x' }).url,
    ).toBe('https://github.com/o/r/issues/1');
    expect(first({ id: 1, htmlLink: 'https://calendar.google.com/event?eid=x' }).url).toBe(
      'https://calendar.google.com/event?eid=x',
    );
    expect(first({ id: 1, url: '/relative/path' }).url).toBeNull();
    expect(first({ id: 1 }).url).toBeNull();
  });

  it('says what a lone JSON object without an id or list holds, rather than guessing it is an item', () => {
    expect(extractError(text('{"temperature": 22, "conditions": "Cloudy"}')).message).toMatch(
      /^no list found: 1 content block: text \(JSON: an object with keys temperature, conditions\)\./,
    );
  });
});

describe('extractItems: a map', () => {
  const read = (result: unknown, map: ItemMap) => extractItems(result, { map });

  it('reads the list at map.items, in structuredContent or in a JSON text block, with dotted paths and indexes', () => {
    const answer = { data: { search: { nodes: [{ node_id: 'n1', info: { names: ['Deploy'] } }] } } };
    const map = { items: 'data.search.nodes', id: 'node_id', title: 'info.names[0]' };
    expect(read(structured(answer), map)[0]).toMatchObject({ itemId: 'n1', title: 'Deploy' });
    expect(read(text(JSON.stringify(answer)), map)[0]).toMatchObject({ itemId: 'n1', title: 'Deploy' });
  });

  it('joins a list of id paths into one id', () => {
    const issue = { number: 42, repository: { full_name: 'octo/app' }, title: 'Crash' };
    expect(read(structured({ items: [issue] }), { id: ['repository.full_name', 'number'] })[0]!.itemId).toBe(
      'octo/app:42',
    );
  });

  it('reads starts_at, url and detail from their paths', () => {
    const event = {
      ref: 'x',
      when: { dateTime: '2026-03-01T09:30:00+01:00' },
      links: { web: 'https://x.test/1' },
      notes: 'Bring mockups',
    };
    const [item] = read(structured({ items: [event] }), {
      starts_at: 'when',
      url: 'links.web',
      detail: 'notes',
    });
    expect(item).toMatchObject({ startsAt: '2026-03-01T08:30:00.000Z', url: 'https://x.test/1' });
    expect(item!.detail).toBe(
      '{"when":{"dateTime":"2026-03-01T09:30:00+01:00"},"notes":"Bring mockups","ref":"x","links":{"web":"https://x.test/1"}}',
    );
  });

  it('picks an element by a key: payload.headers[name=Subject].value', () => {
    const mail = {
      id: 'm',
      payload: {
        headers: [
          { name: 'To', value: 'me' },
          { name: 'Subject', value: 'Hi' },
        ],
      },
    };
    expect(
      read(structured({ messages: [mail] }), { title: 'payload.headers[name=Subject].value' })[0]!.title,
    ).toBe('Hi');
  });

  it('falls back to the conventions for an item where a mapped path is missing', () => {
    const items = read(
      structured({
        items: [
          { id: 'a', label: 'Mapped' },
          { id: 'b', title: 'Conventional' },
        ],
      }),
      {
        title: 'label',
      },
    );
    expect(items.map((item) => item.title)).toEqual(['Mapped', 'Conventional']);
  });

  it('names the items path and what is there instead when it is not a list', () => {
    const mapped = (() => {
      try {
        read(
          { ...text('{"entities": {"count": 2}}'), structuredContent: { graph: {} } },
          { items: 'entities' },
        );
      } catch (caught) {
        return (caught as Error).message;
      }
      return '';
    })();
    expect(mapped).toBe(
      'map.items "entities" is not a list: in structuredContent, at the top there is an object with keys graph; in text block 1, it holds an object with keys count',
    );
  });

  it('names a mapped field that reads nothing in any item, and the keys at the deepest step that exists', () => {
    const notifications = [{ id: '1', subject: { title: 'A', url: 'u', type: 'Issue' } }];
    const error = (() => {
      try {
        read(structured({ items: notifications }), { title: 'subject.titel' });
      } catch (caught) {
        return caught as Error;
      }
      throw new Error('expected an error');
    })();
    expect(error).toBeInstanceOf(ExtractError);
    expect(error.message).toBe(
      'map.title "subject.titel" reads nothing as text in any item: in the first item, at "subject" there is an object with keys title, url, type. Fix the path in the source\'s "map" (docs/sources.md#map).',
    );
  });

  it('reports an id path missing from every item, and one that is there but not a date for starts_at', () => {
    expect(() => read(structured({ items: [{ id: 'a' }] }), { id: ['repo', 'number'] })).toThrow(
      /^map\.id "repo" reads nothing as text in any item: in the first item, at the top there is an object with keys id\./,
    );
    expect(() => read(structured({ items: [{ id: 'a', start: 'soon' }] }), { starts_at: 'start' })).toThrow(
      /^map\.starts_at "start" reads nothing as a date in any item: in the first item, its value is not usable there\./,
    );
  });

  it('checks nothing on an empty list', () => {
    expect(read(structured({ items: [] }), { title: 'nowhere' })).toEqual([]);
  });
});

describe('extractItems: the values rules test', () => {
  it('keeps the scalars at the paths the rules name, text cut to 200 characters, objects left out', () => {
    const issue = {
      id: 'i',
      reason: 'review_requested',
      fields: { priority: { name: 'High', id: '2' }, votes: 3, flagged: false, parent: null },
      body: 'b'.repeat(1000),
    };
    const [item] = extractItems(structured({ items: [issue] }), {
      fields: [
        'reason',
        'fields.priority.name',
        'fields.votes',
        'fields.flagged',
        'fields.parent',
        'fields.priority',
        'body',
        'missing',
      ],
    });
    expect(item!.fields).toEqual({
      reason: 'review_requested',
      'fields.priority.name': 'High',
      'fields.votes': 3,
      'fields.flagged': false,
      'fields.parent': null,
      body: 'b'.repeat(200),
    });
  });

  it('keeps a path named __proto__ as a plain key', () => {
    const [item] = extractItems(text('[{"id": "x", "__proto__": "p"}]'), { fields: ['__proto__'] });
    expect(Object.keys(item!.fields)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(item!.fields)).toBe(Object.prototype);
  });
});
