import { describe, expect, it } from 'vitest';
import type { ExternalItem, InboxEvent } from '../../machines/external.js';
import { createItemAcceptor } from '../../src/effects/accept-items.js';

const item = (itemId: string): ExternalItem => ({ itemId, title: itemId, startsAt: null, detail: '' });
const NOW = Date.UTC(2026, 0, 5);

/** The real acceptor over an in-memory journal and seen store that record what they were given. */
const acceptor = (seenBefore: string[] = []) => {
  const journal: InboxEvent[] = [];
  const seen = new Set(seenBefore);
  const marked: string[][] = [];
  const accept = createItemAcceptor({
    inbox: { insert: async (events) => void journal.push(...events) },
    seen: {
      has: (_source, itemId) => seen.has(itemId),
      mark: async (_source, itemIds) => {
        marked.push([...itemIds]);
        for (const id of itemIds) seen.add(id);
      },
    },
    storeDetail: () => false,
    now: () => new Date(NOW),
  });
  return { accept, journal, marked };
};

describe('createItemAcceptor', () => {
  it('inserts an item listed twice in one poll once', async () => {
    const { accept, journal } = acceptor();
    const { inserted } = await accept({
      source: 'dex',
      items: [item('a'), item('b'), item('a'), item('b')],
      limit: 20,
      held: [],
    });
    expect(inserted.map((e) => e.item_id)).toEqual(['a', 'b']);
    expect(journal.map((e) => e.item_id)).toEqual(['a', 'b']);
  });

  it('never inserts an item the inbox holds, even when the seen store has forgotten it, and marks it again', async () => {
    const { accept, journal, marked } = acceptor();
    const { inserted, capped } = await accept({
      source: 'dex',
      items: [item('held'), item('new'), item('held')],
      limit: 20,
      held: ['held'],
    });
    expect(inserted.map((e) => e.item_id)).toEqual(['new']);
    expect(capped).toBe(false);
    expect(journal.map((e) => e.item_id)).toEqual(['new']);
    expect(marked).toEqual([['new', 'held']]);
  });

  it('marks every item listed again (its TTL counts from this listing), and leaves those over the cap unmarked', async () => {
    const { accept, marked } = acceptor(['old']);
    const { inserted, capped } = await accept({
      source: 'dex',
      items: [item('old'), item('n1'), item('n2'), item('n3')],
      limit: 2,
      held: [],
    });
    expect(inserted.map((e) => e.item_id)).toEqual(['n1', 'n2']);
    expect(capped).toBe(true);
    expect(marked).toEqual([['n1', 'n2', 'old']]);
  });
});
