import type { InboxEvent } from '../machines/external.js';
import type { InboxFile } from '../src/store/inbox-file.js';
import type { SeenStore } from '../src/store/seen-store.js';

/*
 * In-memory stand-ins for the two stores the real acceptor (src/effects/accept-items.ts) writes
 * to, so the simulation filters and caps items with the daemon's own code.
 */

/** A seen set without TTL (a run lasts hours, the TTL is 7 days). */
export const memorySeenStore = (): Pick<SeenStore, 'has' | 'mark'> => {
  const seen = new Set<string>();
  const key = (source: string, itemId: string) => `${source}\u0000${itemId}`;
  return {
    has: (source: string, itemId: string) => seen.has(key(source, itemId)),
    async mark(source: string, itemIds: readonly string[]) {
      for (const id of itemIds) seen.add(key(source, id));
    },
  };
};

/** An inbox journal that keeps nothing: the inbox actor's context is the inbox. */
export const memoryInboxFile = (): Pick<InboxFile, 'insert'> => {
  return { insert: async (_events: readonly InboxEvent[]) => {} };
};
