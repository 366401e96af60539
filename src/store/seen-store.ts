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

interface SeenRow {
  k: string;
  t: number;
}

const keyOf = (source: string, itemId: string) => `${source}\u0000${itemId}`;

/**
 * Which items each source has listed (key: source + item id) and when it last did, in
 * `.pulse/external_seen.jsonl`: an item is seen until 7 days after its last listing. A mark is
 * written when the item first enters the inbox and again when it is listed with a mark older
 * than a day, so the TTL counts from the last listing across restarts without a write per poll.
 * Pruned and compacted (the latest time of each key kept) on load, and while running once the
 * appended lines outgrow the live marks.
 */
export class SeenStore {
  readonly #seen = new Map<string, number>();
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
      store.#seen.set(row.k, Math.max(row.t, store.#seen.get(row.k) ?? 0));
    }
    store.#lines = rows.length + bad;
    if (bad > 0 || rows.length !== store.#seen.size) await store.#compact(now);
    return store;
  }

  get size(): number {
    return this.#seen.size;
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
    this.#lines += rows.length;
    if (this.#lines > 2 * this.#seen.size + COMPACT_SLACK) return this.#compact(now);
    return this.#write(() => appendJsonLines(this.path, rows));
  }

  /** Forgets expired marks and rewrites the file as the live ones. */
  #compact(now: number): Promise<void> {
    for (const [k, t] of this.#seen) if (now - t >= this.ttlMs) this.#seen.delete(k);
    const rows = [...this.#seen].map(([k, t]) => ({ k, t }));
    this.#lines = rows.length;
    return this.#write(() => rewriteJsonLines(this.path, rows));
  }
}
