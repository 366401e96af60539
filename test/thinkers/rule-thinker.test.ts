import { describe, expect, it } from 'vitest';
import type { InboxEvent } from '../../machines/external.js';
import type { SourceRule } from '../../src/sources/config/config.js';
import { createRuleThinker } from '../../src/thinkers/rule-thinker.js';
import { type Thinker, ThinkTimeoutError, withTimeout } from '../../src/thinkers/thinker.js';

const NOW = Date.parse('2026-03-01T09:00:00.000Z');

const event = (id: string, source: string, title: string, startsAt: string | null = null): InboxEvent => ({
  id,
  source,
  item_id: id,
  title,
  starts_at: startsAt,
  detail: null,
  received_at: '2026-03-01T08:59:00.000Z',
  attempts: 0,
});

const minutesFromNow = (m: number) => new Date(NOW + m * 60_000).toISOString();

describe('createRuleThinker', () => {
  const thinker = createRuleThinker([
    {
      name: 'cal',
      urgency: 0.3,
      rules: [
        { starts_within_min: 15, urgency: 0.8 },
        { title_matches: 'optional', urgency: 0.1 },
      ],
    },
    { name: 'mail', urgency: 0.5, rules: [{ title_matches: 'urgent|asap', urgency: 0.95 }] },
  ]);

  it("gives an event its source's urgency when no rule matches, and 0.5 for an unknown source", async () => {
    const answer = await thinker.think(
      [event('a', 'cal', 'Standup', minutesFromNow(60)), event('b', 'other', 'Hello')],
      NOW,
    );
    expect(answer).toEqual([
      { id: 'a', urgency: 0.3 },
      { id: 'b', urgency: 0.5 },
    ]);
  });

  it('matches titles case-insensitively', async () => {
    const answer = await thinker.think(
      [event('m', 'mail', 'URGENT: server down'), event('n', 'mail', 'Lunch?')],
      NOW,
    );
    expect(answer).toEqual([
      { id: 'm', urgency: 0.95 },
      { id: 'n', urgency: 0.5 },
    ]);
  });

  it('matches items that start between now and N minutes from now, not earlier or later ones', async () => {
    const answer = await thinker.think(
      [
        event('soon', 'cal', 'Review', minutesFromNow(15)),
        event('now', 'cal', 'Review', minutesFromNow(0)),
        event('late', 'cal', 'Review', minutesFromNow(16)),
        event('past', 'cal', 'Review', minutesFromNow(-1)),
        event('bad', 'cal', 'Review', 'not a date'),
      ],
      NOW,
    );
    expect(answer.map((j) => j.urgency)).toEqual([0.8, 0.8, 0.3, 0.3, 0.3]);
  });

  it('lets the last matching rule win', async () => {
    const answer = await thinker.think([event('o', 'cal', 'Optional sync', minutesFromNow(5))], NOW);
    expect(answer).toEqual([{ id: 'o', urgency: 0.1 }]);
  });
});

describe('createRuleThinker: field rules', () => {
  const withFields = (id: string, fields?: InboxEvent['fields']): InboxEvent => ({
    ...event(id, 'jira', 'An issue'),
    ...(fields === undefined ? {} : { fields }),
  });
  const urgencies = async (rules: SourceRule[], events: InboxEvent[]) =>
    (await createRuleThinker([{ name: 'jira', urgency: 0.2, rules }]).think(events, NOW)).map(
      (j) => j.urgency,
    );

  it('equals compares as text, so 1 matches "1", and null only null', async () => {
    const rules: SourceRule[] = [{ field: 'p', equals: 1, urgency: 0.9 }];
    expect(
      await urgencies(rules, [
        withFields('a', { p: '1' }),
        withFields('b', { p: 1 }),
        withFields('c', { p: 2 }),
        withFields('d', { p: null }),
      ]),
    ).toEqual([0.9, 0.9, 0.2, 0.2]);
    expect(
      await urgencies(
        [{ field: 'p', equals: null, urgency: 0.9 }],
        [withFields('n', { p: null }), withFields('s', { p: 'null' })],
      ),
    ).toEqual([0.9, 0.2]);
  });

  it('in matches any of its values', async () => {
    const rules: SourceRule[] = [{ field: 'fields.priority.name', in: ['High', 'Highest'], urgency: 0.8 }];
    expect(
      await urgencies(rules, [
        withFields('a', { 'fields.priority.name': 'Highest' }),
        withFields('b', { 'fields.priority.name': 'Low' }),
      ]),
    ).toEqual([0.8, 0.2]);
  });

  it('matches is a case-insensitive regular expression on the value as text', async () => {
    const rules: SourceRule[] = [{ field: 'reason', matches: '^(mention|review_requested)$', urgency: 0.9 }];
    expect(
      await urgencies(rules, [
        withFields('a', { reason: 'MENTION' }),
        withFields('b', { reason: 'subscribed' }),
        withFields('c', { reason: null }),
      ]),
    ).toEqual([0.9, 0.2, 0.2]);
  });

  it('gte and lte compare numbers, numeric text too, and never match what is not a number', async () => {
    const gte: SourceRule[] = [{ field: 'users', gte: 100, urgency: 1 }];
    expect(
      await urgencies(gte, [
        withFields('a', { users: 100 }),
        withFields('b', { users: '250' }),
        withFields('c', { users: 99 }),
        withFields('d', { users: 'many' }),
        withFields('e', { users: '' }),
        withFields('f', { users: true }),
      ]),
    ).toEqual([1, 1, 0.2, 0.2, 0.2, 0.2]);
    const lte: SourceRule[] = [{ field: 'priority', lte: 2, urgency: 1 }];
    expect(
      await urgencies(lte, [withFields('a', { priority: 1 }), withFields('b', { priority: 3 })]),
    ).toEqual([1, 0.2]);
  });

  it('never matches an event without the field: absent from the item, or polled before the rule existed', async () => {
    const rules: SourceRule[] = [{ field: 'reason', equals: 'mention', urgency: 0.9 }];
    expect(await urgencies(rules, [withFields('a', {}), withFields('b')])).toEqual([0.2, 0.2]);
  });
});

describe('withTimeout', () => {
  it('passes an answer in time through', async () => {
    const fast: Thinker = { think: async (events) => events.map((e) => ({ id: e.id, urgency: 1 })) };
    await expect(withTimeout(fast, 50).think([event('a', 'cal', 'x')], NOW)).resolves.toEqual([
      { id: 'a', urgency: 1 },
    ]);
  });

  it('turns a late answer into a ThinkTimeoutError', async () => {
    const slow: Thinker = { think: () => new Promise((resolve) => setTimeout(() => resolve([]), 200)) };
    await expect(withTimeout(slow, 10).think([], NOW)).rejects.toBeInstanceOf(ThinkTimeoutError);
  });
});
