import { appendJsonLines, createWriteQueue, readJsonLines, rewriteJsonLines } from './jsonl-file.js';

const DAY_MS = 24 * 60 * 60 * 1000;
export const SEEN_TTL_MS = 7 * DAY_MS;
/**
 * A mark younger than this is not written again when its item is listed again: one line per
 * listed item per day at most, and a mark on disk is never more than a day behind the item's
 * last listing.
 */
export const SEEN_REFRESH_MS = DAY_MS;
/** Lines appended beyond twice the live marks (and this slack) make a running store compact its file. */
const COMPACT_SLACK = 1_000;

/** A line of the file: a source's item (`k`: source + item id), or a server's (`k`: server + key, `s`: the source that first listed it). */
interface SeenRow {
  k: string;
  t: number;
  s?: string;
}

const keyOf = (source: string, itemId: string) => `${source}\u0000${itemId}`;

/** When an item of a server was last listed, and which source listed it first. */
interface FirstListing {
  t: number;
  s: string;
}

/**
 * Which items each source has listed (key: source + item id) and when it last did, in
 * `.pulse/external_seen.jsonl`: an item is seen until 7 days after its last listing. A mark is
 * written when the item first enters the inbox and again when it is listed with a mark older
 * than a day, so the TTL counts from the last listing across restarts without a write per poll.
 * The same file keeps, per server, which source first listed each item (by its keys on that
 * server: its id, its link), so an item two sources of a server list is one event. Pruned and
 * compacted (the latest time of each key kept) on load, and while running once the appended
 * lines outgrow the live marks.
 */
export class SeenStore {
  readonly #seen = new Map<string, number>();
  readonly #firstListed = new Map<string, FirstListing>();
  readonly #write = createWriteQueue();
  /** Lines in the file: those the last compaction wrote, and those appended since. */
  #lines = 0;

  private constructor(
    readonly path: string,
    readonly ttlMs: number,
    readonly refreshMs: number,
  ) {}

  static async load(
    path: string,
    { now = Date.now(), ttlMs = SEEN_TTL_MS, refreshMs = SEEN_REFRESH_MS } = {},
  ): Promise<SeenStore> {
    const store = new SeenStore(path, ttlMs, refreshMs);
    const { rows, bad } = await readJsonLines(path);
    for (const row of rows as SeenRow[]) {
      if (typeof row?.k !== 'string' || typeof row.t !== 'number') continue;
      if (now - row.t >= ttlMs) continue;
      if (typeof row.s === 'string') {
        const known = store.#firstListed.get(row.k);
        // The first source stays the first: a later line only moves the time on.
        store.#firstListed.set(row.k, { t: Math.max(row.t, known?.t ?? 0), s: known?.s ?? row.s });
      } else store.#seen.set(row.k, Math.max(row.t, store.#seen.get(row.k) ?? 0));
    }
    store.#lines = rows.length + bad;
    if (bad > 0 || rows.length !== store.size) await store.#compact(now);
    return store;
  }

  get size(): number {
    return this.#seen.size + this.#firstListed.size;
  }

  /** Listed within the TTL: not new. */
  has(source: string, itemId: string, now = Date.now()): boolean {
    const at = this.#seen.get(keyOf(source, itemId));
    return at !== undefined && now - at < this.ttlMs;
  }

  /** Marked less than `refreshMs` ago: marking it again now would write nothing. */
  markedRecently(source: string, itemId: string, now = Date.now()): boolean {
    const at = this.#seen.get(keyOf(source, itemId));
    return at !== undefined && now - at < this.refreshMs;
  }

  /**
   * Marks items listed at `now`, durably: a new key, or one whose mark is older than
   * `refreshMs` (expired ones too), gets `now`; a recent mark is left as it is.
   */
  mark(source: string, itemIds: readonly string[], now = Date.now()): Promise<void> {
    const rows: SeenRow[] = [];
    for (const itemId of itemIds) {
      if (this.markedRecently(source, itemId, now)) continue;
      const k = keyOf(source, itemId);
      this.#seen.set(k, now);
      rows.push({ k, t: now });
    }
    return this.#append(rows, now);
  }

  /** The source that first listed, within the TTL, an item known on `server` by any of `keys`; null when none did. */
  firstListedBy(server: string, keys: readonly string[], now = Date.now()): string | null {
    for (const key of keys) {
      const first = this.#firstListed.get(keyOf(server, key));
      if (first !== undefined && now - first.t < this.ttlMs) return first.s;
    }
    return null;
  }

  /**
   * Marks, durably, that `source` listed at `now` an item known on `server` by `keys`: a key
   * another source listed first within the TTL keeps that source; a mark is written again once
   * older than `refreshMs`, as a source's are.
   */
  markOnServer(server: string, keys: readonly string[], source: string, now = Date.now()): Promise<void> {
    const rows: SeenRow[] = [];
    for (const key of keys) {
      const k = keyOf(server, key);
      const known = this.#firstListed.get(k);
      const live = known !== undefined && now - known.t < this.ttlMs;
      if (live && now - known.t < this.refreshMs) continue;
      const first = { t: now, s: live ? known.s : source };
      this.#firstListed.set(k, first);
      rows.push({ k, ...first });
    }
    return this.#append(rows, now);
  }

  #append(rows: readonly SeenRow[], now: number): Promise<void> {
    this.#lines += rows.length;
    if (this.#lines > 2 * this.size + COMPACT_SLACK) return this.#compact(now);
    return this.#write(() => appendJsonLines(this.path, rows));
  }

  /** Forgets expired marks and rewrites the file as the live ones. */
  #compact(now: number): Promise<void> {
    for (const [k, t] of this.#seen) if (now - t >= this.ttlMs) this.#seen.delete(k);
    for (const [k, { t }] of this.#firstListed) if (now - t >= this.ttlMs) this.#firstListed.delete(k);
    const rows: SeenRow[] = [
      ...[...this.#seen].map(([k, t]) => ({ k, t })),
      ...[...this.#firstListed].map(([k, first]) => ({ k, ...first })),
    ];
    this.#lines = rows.length;
    return this.#write(() => rewriteJsonLines(this.path, rows));
  }
}
