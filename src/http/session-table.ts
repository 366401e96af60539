/** What the table needs of a session: a way to end it. */
export interface ClosableSession {
  close(): Promise<void>;
}

/** How many MCP sessions are kept, and for how long unused: the defaults are in docs/reliability.md. */
export interface SessionLimits {
  /** A session with no request and no open stream for this long is closed. */
  idleMs: number;
  /** Sessions held at once; a new one past it closes the least recently used idle one. */
  maxSessions: number;
}

/** The limits `pulse start` uses unless told otherwise. */
export const SESSION_DEFAULTS: SessionLimits = { idleMs: 30 * 60_000, maxSessions: 1000 };

interface Entry<S> {
  session: S;
  /** Open response streams (the GET notification stream): while any is open, the session is in use. */
  streams: number;
  timer: NodeJS.Timeout;
}

/**
 * The open MCP sessions by id, least recently used first. Each is closed once idle for
 * `idleMs`; at `maxSessions`, making room closes the least recently used one that has no open
 * stream. A closed session is forgotten by `delete` (its transport's `onclose`).
 */
export const createSessionTable = <S extends ClosableSession>({ idleMs, maxSessions }: SessionLimits) => {
  const entries = new Map<string, Entry<S>>();
  let reserved = 0;

  const end = (id: string) => {
    const entry = entries.get(id);
    if (entry === undefined) return;
    entries.delete(id);
    clearTimeout(entry.timer);
    // A failed close still frees the slot; the session is unreachable either way.
    entry.session.close().catch(() => undefined);
  };

  const expire = (id: string) => {
    // An open stream keeps the session; its end starts the idle clock again.
    if ((entries.get(id)?.streams ?? 0) === 0) end(id);
  };

  return {
    get size() {
      return entries.size;
    },
    /** Adds a session that has just initialised. */
    add(id: string, session: S): void {
      const timer = setTimeout(() => expire(id), idleMs).unref();
      entries.set(id, { session, streams: 0, timer });
    },
    /** The session, marked as used now; undefined when unknown, expired or evicted. */
    use(id: string): S | undefined {
      const entry = entries.get(id);
      if (entry === undefined) return undefined;
      entries.delete(id);
      entries.set(id, entry);
      entry.timer.refresh();
      return entry.session;
    },
    /** Counts a response stream of the session as open until the returned function is called. */
    openStream(id: string): () => void {
      const entry = entries.get(id);
      if (entry === undefined) return () => undefined;
      entry.streams++;
      let open = true;
      return () => {
        if (!open) return;
        open = false;
        entry.streams--;
        if (entries.get(id) === entry) entry.timer.refresh();
      };
    },
    /**
     * Holds a place for one new session, closing the least recently used idle one when the
     * table is full; false when every session held is in use. `release` gives the place back.
     */
    reserve(): boolean {
      if (entries.size + reserved < maxSessions) {
        reserved++;
        return true;
      }
      for (const [id, entry] of entries) {
        if (entry.streams > 0) continue;
        end(id);
        reserved++;
        return true;
      }
      return false;
    },
    release(): void {
      reserved--;
    },
    delete(id: string): void {
      const entry = entries.get(id);
      if (entry === undefined) return;
      entries.delete(id);
      clearTimeout(entry.timer);
    },
    /** Closes every session; one failing close does not skip the rest. */
    async close(): Promise<void> {
      const open = [...entries.values()];
      entries.clear();
      for (const { timer } of open) clearTimeout(timer);
      await Promise.allSettled(open.map(({ session }) => session.close()));
    },
  };
};
