import { createHash } from 'node:crypto';
import type { AlsoListed, ExternalItem, InboxEvent } from '../../machines/external.js';
import type { AcceptInput, AcceptOutput } from '../../machines/inbox-context.js';
import type { InboxFile } from '../store/inbox-file.js';
import type { SeenStore } from '../store/seen-store.js';

/** Our stable id for a source's item: the same item always gets the same id. */
export const inboxEventId = (source: string, itemId: string): string =>
  `ext_${createHash('sha256').update(`${source}\u0000${itemId}`).digest('hex').slice(0, 16)}`;

/**
 * What makes two listings of a server one item: the same id, or the same link with the same
 * title. A link alone is not enough: a map may point every item of a repository at its page.
 */
export const serverKeys = (item: Pick<ExternalItem, 'itemId' | 'title' | 'url'>): string[] => [
  `id:${item.itemId}`,
  ...(item.url == null ? [] : [`url:${item.url}\u0000${item.title}`]),
];

/**
 * Lets the new items of one poll into the inbox, up to `limit`: written to the journal
 * (fsynced) before they count as inserted, and marked seen only after that. An item is new
 * when the inbox does not hold it (`held`), no mark says it was listed in the last 7 days, and
 * no other source of the same server listed it first (then it is one event, under that source,
 * and the listing is reported in `alsoListed`); an item listed twice in one poll counts once.
 * Every item listed again is marked again (its TTL counts from this listing), so one a source
 * keeps listing stays seen however long it runs. Items over the limit stay unmarked, so the
 * next poll offers them again.
 */
export const createItemAcceptor =
  ({
    inbox,
    seen,
    storeDetail,
    now = () => new Date(),
  }: {
    inbox: Pick<InboxFile, 'insert'>;
    seen: Pick<SeenStore, 'has' | 'mark' | 'firstListedBy' | 'markOnServer'>;
    storeDetail: () => boolean;
    now?: () => Date;
  }) =>
  async ({ source, server, items, limit, held }: AcceptInput): Promise<AcceptOutput> => {
    const at = now();
    const inInbox = new Set(held);
    const fresh: ExternalItem[] = [];
    const again: ExternalItem[] = [];
    const alsoListed: AlsoListed[] = [];
    const listed = new Set<string>();
    for (const item of items) {
      if (listed.has(item.itemId)) continue;
      listed.add(item.itemId);
      if (inInbox.has(item.itemId) || seen.has(source, item.itemId, at.getTime())) {
        again.push(item);
        continue;
      }
      const first = seen.firstListedBy(server, serverKeys(item), at.getTime());
      if (first === null || first === source) fresh.push(item);
      else {
        again.push(item);
        alsoListed.push({
          at: at.toISOString(),
          source,
          first,
          item_id: item.itemId,
          title: item.title,
        });
      }
    }
    const taken = fresh.slice(0, limit);
    const inserted: InboxEvent[] = taken.map((item) => ({
      id: inboxEventId(source, item.itemId),
      source,
      server,
      item_id: item.itemId,
      title: item.title,
      starts_at: item.startsAt,
      url: item.url ?? null,
      detail: storeDetail() ? item.detail : null,
      ...(item.fields === undefined || Object.keys(item.fields).length === 0 ? {} : { fields: item.fields }),
      received_at: at.toISOString(),
      attempts: 0,
    }));
    await inbox.insert(inserted);
    const marked = [...taken, ...again];
    await seen.mark(
      source,
      marked.map((item) => item.itemId),
      at.getTime(),
    );
    await seen.markOnServer(server, marked.flatMap(serverKeys), source, at.getTime());
    return { inserted, capped: fresh.length > taken.length, alsoListed };
  };
