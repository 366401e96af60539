import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, ExtractError, extractItems } from '../../src/sources/extract.js';

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

  it('says which lists it looked for, and what it found instead, when there is no list', () => {
    const error = extractError({
      ...text('not json', '{"count": 3}'),
      structuredContent: { count: 3, next: null },
    });
    expect(error.message).toBe(
      'no list found: expected one of items, events, messages, results, data, or a JSON array (got structuredContent with keys count, next and 2 text block(s) without a JSON list)',
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
  it('is the canonical JSON of the item, keys sorted at every level', () => {
    expect(first({ z: 1, a: { y: [true, null], b: 'x' } }).detail).toBe(
      '{"a":{"b":"x","y":[true,null]},"z":1}',
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
    expect(first(item).detail).toBe('{"self":"[circular]","title":"loop"}');
  });

  it('writes values JSON has no form for as JSON.stringify would', () => {
    expect(canonicalJson({ a: undefined, b: () => 1, c: [undefined, Number.NaN], d: 10n })).toBe(
      '{"c":[null,null],"d":"10"}',
    );
  });
});
