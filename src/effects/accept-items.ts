import { createHash } from 'node:crypto';
import type { InboxEvent } from '../../machines/external.js';
import type { AcceptInput, AcceptOutput } from '../../machines/inbox.js';
import type { InboxFile } from '../store/inbox-file.js';
import type { SeenStore } from '../store/seen-store.js';

/** Our stable id for a source's item: the same item always gets the same id. */
export const inboxEventId = (source: string, itemId: string): string =>
  `ext_${createHash('sha256').update(`${source}\u0000${itemId}`).digest('hex').slice(0, 16)}`;

/**
 * Lets the new items of one poll into the inbox, up to `limit`: written to the journal
 * (fsynced) before they count as inserted, and marked seen only after that. An item is new
 * when the inbox does not hold it (`held`) and no mark says it was listed in the last 7 days;
 * an item listed twice in one poll counts once. Every item listed again is marked again (its
 * TTL counts from this listing), so one a source keeps listing stays seen however long it
 * runs. Items over the limit stay unmarked, so the next poll offers them again.
 */
export const createItemAcceptor =
  ({
    inbox,
    seen,
    storeDetail,
    now = () => new Date(),
  }: {
    inbox: Pick<InboxFile, 'insert'>;
    seen: Pick<SeenStore, 'has' | 'mark'>;
    storeDetail: () => boolean;
    now?: () => Date;
  }) =>
  async ({ source, items, limit, held }: AcceptInput): Promise<AcceptOutput> => {
    const at = now();
    const inInbox = new Set(held);
    const fresh = [];
    const again: string[] = [];
    const listed = new Set<string>();
    for (const item of items) {
      if (listed.has(item.itemId)) continue;
      listed.add(item.itemId);
      if (inInbox.has(item.itemId) || seen.has(source, item.itemId, at.getTime())) again.push(item.itemId);
      else fresh.push(item);
    }
    const taken = fresh.slice(0, limit);
    const inserted: InboxEvent[] = taken.map((item) => ({
      id: inboxEventId(source, item.itemId),
      source,
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
    await seen.mark(source, [...taken.map((item) => item.itemId), ...again], at.getTime());
    return { inserted, capped: fresh.length > taken.length };
  };
