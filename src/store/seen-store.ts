import { appendJsonLines, createWriteQueue, readJsonLines, rewriteJsonLines } from './jsonl-file.js';

export const SEEN_TTL_MS = 7 * 24 * 60 * 60 * 1000;

interface SeenRow {
  k: string;
  t: number;
}

const keyOf = (source: string, itemId: string) => `${source}\u0000${itemId}`;

/**
 * Which items each source has already delivered to the inbox (key: source + item id), kept
 * 7 days in `.pulse/external_seen.jsonl`. Pruned and compacted on load.
 */
export class SeenStore {
  readonly #seen = new Map<string, number>();
  readonly #write = createWriteQueue();

  private constructor(
    readonly path: string,
    readonly ttlMs: number,
  ) {}

  static async load(path: string, { now = Date.now(), ttlMs = SEEN_TTL_MS } = {}): Promise<SeenStore> {
    const store = new SeenStore(path, ttlMs);
    const { rows, bad } = await readJsonLines(path);
    for (const row of rows as SeenRow[]) {
      if (typeof row?.k !== 'string' || typeof row.t !== 'number') continue;
      if (now - row.t >= ttlMs) continue;
      store.#seen.set(row.k, Math.max(row.t, store.#seen.get(row.k) ?? 0));
    }
    if (bad > 0 || rows.length !== store.#seen.size) await store.#compact();
    return store;
  }

  get size(): number {
    return this.#seen.size;
  }

  has(source: string, itemId: string, now = Date.now()): boolean {
    const at = this.#seen.get(keyOf(source, itemId));
    return at !== undefined && now - at < this.ttlMs;
  }

  /** Marks items seen, durably; already-seen keys keep their first time. */
  mark(source: string, itemIds: readonly string[], now = Date.now()): Promise<void> {
    const rows: SeenRow[] = [];
    for (const itemId of itemIds) {
      const k = keyOf(source, itemId);
      if (this.#seen.has(k)) continue;
      this.#seen.set(k, now);
      rows.push({ k, t: now });
    }
    return this.#write(() => appendJsonLines(this.path, rows));
  }

  #compact(): Promise<void> {
    const rows = [...this.#seen].map(([k, t]) => ({ k, t }));
    return this.#write(() => rewriteJsonLines(this.path, rows));
  }
}
