import { describe, expect, it } from 'vitest';
import type { InboxEvent } from '../../machines/external.js';
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
