import type { LoadedInbox } from '../../machines/inbox-context.js';
import type { InboxFile } from '../store/inbox-file.js';
import type { SeenStore } from '../store/seen-store.js';
import { serverKeys } from './accept-items.js';

/**
 * Restores the inbox and the most recent dead letters. First marks seen every item the journal records as inserted, and its
 * source as the first to list it on its server (an item inserted just before a crash may not be marked yet), then compacts the
 * journal and cuts a torn last line off the dead letters.
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
    // And which source listed each first on its server (events written before pulse kept the server have none).
    for (const event of inserted) {
      if (event.server === undefined) continue;
      const keys = serverKeys({ itemId: event.item_id, title: event.title, url: event.url ?? null });
      await seen.markOnServer(event.server, keys, event.source, now());
    }
    if (journalRows !== events.length) await inbox.compact(events);
    await inbox.repairDeadLetters();
    return { events, deadLetters: await inbox.loadDeadLetters() };
  };
