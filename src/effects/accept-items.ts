import { createHash } from 'node:crypto';
import type { InboxEvent } from '../../machines/external.js';
import type { AcceptInput, AcceptOutput } from '../../machines/inbox.js';
import type { InboxFile } from '../store/inbox-file.js';
import type { SeenStore } from '../store/seen-store.js';

/** Our stable id for a source's item: the same item always gets the same id. */
export const inboxEventId = (source: string, itemId: string): string =>
  `ext_${createHash('sha256').update(`${source}\u0000${itemId}`).digest('hex').slice(0, 16)}`;

/**
 * Lets the unseen items of one poll into the inbox, up to `limit`: written to the journal
 * (fsynced) before they count as inserted, and marked seen only after that. Items over the
 * limit stay unseen, so the next poll offers them again.
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
  async ({ source, items, limit }: AcceptInput): Promise<AcceptOutput> => {
    const at = now();
    const unseen = [];
    const listed = new Set<string>();
    for (const item of items) {
      if (listed.has(item.itemId) || seen.has(source, item.itemId, at.getTime())) continue;
      listed.add(item.itemId);
      unseen.push(item);
    }
    const taken = unseen.slice(0, limit);
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
    await seen.mark(
      source,
      taken.map((item) => item.itemId),
      at.getTime(),
    );
    return { inserted, capped: unseen.length > taken.length };
  };
