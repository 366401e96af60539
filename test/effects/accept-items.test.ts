import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ExternalItem, InboxEvent } from '../../machines/external.js';
import { createItemAcceptor } from '../../src/effects/accept-items.js';
import { SeenStore } from '../../src/store/seen-store.js';

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
      // One source here: no item of its server was listed by another first.
      firstListedBy: () => null,
      markOnServer: async () => {},
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
      server: 'dex-server',
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
      server: 'dex-server',
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
      server: 'dex-server',
      items: [item('old'), item('n1'), item('n2'), item('n3')],
      limit: 2,
      held: [],
    });
    expect(inserted.map((e) => e.item_id)).toEqual(['n1', 'n2']);
    expect(capped).toBe(true);
    expect(marked).toEqual([['n1', 'n2', 'old']]);
  });
});

describe('one item, one mention: two sources of one server', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  /** The real acceptor over a real seen store in a temp folder, and the events it inserted. */
  const withSeenStore = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pulse-accept-'));
    dirs.push(dir);
    const path = join(dir, 'external_seen.jsonl');
    const journal: InboxEvent[] = [];
    const acceptWith = (seen: SeenStore) =>
      createItemAcceptor({
        inbox: { insert: async (events) => void journal.push(...events) },
        seen,
        storeDetail: () => false,
        now: () => new Date(NOW),
      });
    const accept = acceptWith(await SeenStore.load(path, { now: NOW }));
    return { accept, journal, reload: async () => acceptWith(await SeenStore.load(path, { now: NOW })) };
  };

  const issue = (itemId: string, title: string, url: string | null = null): ExternalItem => ({
    itemId,
    title,
    startsAt: null,
    url,
    detail: '',
  });
  const offer = (source: string, server: string, items: ExternalItem[]) => ({
    source,
    server,
    items,
    limit: 20,
    held: [],
  });

  it('lets an item in under the first source that lists it, and reports the second listing, by id or by link and title', async () => {
    const { accept, journal } = await withSeenStore();
    const login = issue('1347', 'Login 500s for SSO users', 'https://git.example/acme/issues/1347');
    await accept(offer('issues', 'git', [login, issue('1348', 'Docs typo')]));
    // The same list read another way: the same ids, or (without them) the same link and title.
    const again = await accept(
      offer('issues-text', 'git', [
        issue('1347', 'Login 500s for SSO users'),
        issue('sha256:9f2c', 'Login 500s for SSO users', 'https://git.example/acme/issues/1347'),
        issue('1349', 'New one'),
      ]),
    );
    expect(again.inserted.map((e) => e.item_id)).toEqual(['1349']);
    expect(again.alsoListed).toEqual([
      {
        at: new Date(NOW).toISOString(),
        source: 'issues-text',
        first: 'issues',
        item_id: '1347',
        title: 'Login 500s for SSO users',
      },
      {
        at: new Date(NOW).toISOString(),
        source: 'issues-text',
        first: 'issues',
        item_id: 'sha256:9f2c',
        title: 'Login 500s for SSO users',
      },
    ]);
    expect(journal.map((e) => [e.source, e.item_id])).toEqual([
      ['issues', '1347'],
      ['issues', '1348'],
      ['issues-text', '1349'],
    ]);
    // Listed again later, it is neither new nor reported again.
    expect(await accept(offer('issues-text', 'git', [issue('1347', 'Login 500s for SSO users')]))).toEqual({
      inserted: [],
      capped: false,
      alsoListed: [],
    });
  });

  it('keeps apart the same id on two servers, and a shared link under two titles', async () => {
    const { accept } = await withSeenStore();
    const repo = 'https://git.example/acme';
    await accept(offer('notes', 'git', [issue('7', 'Review requested', repo)]));
    const other = await accept(offer('tickets', 'jira', [issue('7', 'Review requested', repo)]));
    expect(
      other.inserted.map((e) => e.item_id),
      'another server: another item',
    ).toEqual(['7']);
    // One repository's page as the link of every notification: only the title tells them apart.
    const mentions = await accept(offer('mentions', 'git', [issue('8', 'You were mentioned', repo)]));
    expect(mentions.inserted.map((e) => e.item_id)).toEqual(['8']);
  });

  it('remembers across a restart which source listed an item first', async () => {
    const { accept, reload } = await withSeenStore();
    await accept(offer('issues', 'git', [issue('1347', 'Login 500s for SSO users')]));
    const restarted = await reload();
    const after = await restarted(offer('issues-text', 'git', [issue('1347', 'Login 500s for SSO users')]));
    expect(after.inserted).toEqual([]);
    expect(after.alsoListed?.map((a) => a.first)).toEqual(['issues']);
  });
});
