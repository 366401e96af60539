import type { LoadedInbox } from '../../machines/inbox.js';
import type { InboxFile } from '../store/inbox-file.js';
import type { SeenStore } from '../store/seen-store.js';

/**
 * Restores the inbox and the most recent dead letters. First marks seen every item the journal records as inserted (an item
 * inserted just before a crash may not be marked yet), then compacts the journal and cuts a torn last line off the dead letters.
 */
export const createInboxLoader =
  ({ inbox, seen, now = () => Date.now() }: { inbox: InboxFile; seen: SeenStore; now?: () => number }) =>
  async (): Promise<LoadedInbox> => {
    const { events, inserted, journalRows } = await inbox.load();
    const bySource = new Map<string, string[]>();
    for (const event of inserted) {
      const ids = bySource.get(event.source) ?? [];
      ids.push(event.item_id);
      bySource.set(event.source, ids);
    }
    for (const [source, ids] of bySource) await seen.mark(source, ids, now());
    if (journalRows !== events.length) await inbox.compact(events);
    await inbox.repairDeadLetters();
    return { events, deadLetters: await inbox.loadDeadLetters() };
  };
