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

/** What the HTTP layer knows of one open session, for the status page's list of connected agents. */
export interface SessionFacts {
  id: string;
  /** The client's own name and version, from its `initialize` request's `clientInfo`. */
  client: { name: string; version: string } | null;
  /** The name the agent gave in its last tool call's `agent` argument; null while it gave none. */
  agent: string | null;
  connectedAt: number;
  /** When its last request came (a tool call, a read, its notification stream opening). */
  lastRequestAt: number;
}

interface Entry<S> {
  session: S;
  facts: SessionFacts;
  /** Open response streams (the GET notification stream): while any is open, the session is in use. */
  streams: number;
  timer: NodeJS.Timeout;
}

/**
 * The open MCP sessions by id, least recently used first. Each is closed once idle for
 * `idleMs`; at `maxSessions`, making room closes the least recently used one that has no open
 * stream. A closed session is forgotten by `delete` (its transport's `onclose`).
 */
export const createSessionTable = <S extends ClosableSession>(
  { idleMs, maxSessions }: SessionLimits,
  /** Called whenever a session comes, goes, or is used: the status page follows the list. */
  onChange: () => void = () => undefined,
  now: () => number = Date.now,
) => {
  const entries = new Map<string, Entry<S>>();
  let reserved = 0;

  const end = (id: string) => {
    const entry = entries.get(id);
    if (entry === undefined) return;
    entries.delete(id);
    clearTimeout(entry.timer);
    onChange();
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
    /** Adds a session that has just initialised, by the client that named itself `client`. */
    add(id: string, session: S, client: SessionFacts['client'] = null): void {
      const timer = setTimeout(() => expire(id), idleMs).unref();
      const at = now();
      entries.set(id, {
        session,
        facts: { id, client, agent: null, connectedAt: at, lastRequestAt: at },
        streams: 0,
        timer,
      });
      onChange();
    },
    /** The session, marked as used now (by `agent`, when the request names one); undefined when unknown, expired or evicted. */
    use(id: string, agent?: string): S | undefined {
      const entry = entries.get(id);
      if (entry === undefined) return undefined;
      entries.delete(id);
      entries.set(id, entry);
      entry.timer.refresh();
      entry.facts = { ...entry.facts, lastRequestAt: now(), agent: agent ?? entry.facts.agent };
      onChange();
      return entry.session;
    },
    /** The open sessions (those `where` picks, else all), oldest first. */
    facts(where: (session: S) => boolean = () => true): SessionFacts[] {
      return [...entries.values()]
        .filter((entry) => where(entry.session))
        .map((entry) => entry.facts)
        .sort((a, b) => a.connectedAt - b.connectedAt);
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
      onChange();
    },
    /** Closes every session (those `where` picks, else all); one failing close does not skip the rest. */
    async close(where: (session: S) => boolean = () => true): Promise<void> {
      const open = [...entries].filter(([, entry]) => where(entry.session));
      for (const [id] of open) entries.delete(id);
      if (open.length > 0) onChange();
      for (const [, { timer }] of open) clearTimeout(timer);
      await Promise.allSettled(open.map(([, { session }]) => session.close()));
    },
  };
};
