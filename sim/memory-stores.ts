import type { InboxEvent } from '../machines/external.js';
import type { InboxFile } from '../src/store/inbox-file.js';
import type { SeenStore } from '../src/store/seen-store.js';

/*
 * In-memory stand-ins for the two stores the real acceptor (src/effects/accept-items.ts) writes
 * to, so the simulation filters and caps items with the daemon's own code.
 */

/** A seen set without TTL (a run lasts hours, the TTL is 7 days), with the first source of each item on a server. */
export const memorySeenStore = (): Pick<SeenStore, 'has' | 'mark' | 'firstListedBy' | 'markOnServer'> => {
  const seen = new Set<string>();
  const first = new Map<string, string>();
  const key = (scope: string, id: string) => `${scope}\u0000${id}`;
  return {
    has: (source: string, itemId: string) => seen.has(key(source, itemId)),
    async mark(source: string, itemIds: readonly string[]) {
      for (const id of itemIds) seen.add(key(source, id));
    },
    firstListedBy: (server: string, keys: readonly string[]) =>
      keys.map((k) => first.get(key(server, k))).find((s) => s !== undefined) ?? null,
    async markOnServer(server: string, keys: readonly string[], source: string) {
      for (const k of keys) if (!first.has(key(server, k))) first.set(key(server, k), source);
    },
  };
};

/** An inbox journal that keeps nothing: the inbox actor's context is the inbox. */
export const memoryInboxFile = (): Pick<InboxFile, 'insert'> => {
  return { insert: async (_events: readonly InboxEvent[]) => {} };
};
