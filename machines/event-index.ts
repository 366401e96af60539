import { isInvalidating, type PulseEvent } from './pulse-files.js';

/** Where the replan lifecycle stands, derived from the log and the last ack. */
export interface PendingReplan {
  pendingEventId: string | null;
  pendingFiles: string[];
}

/**
 * Events read from the log but parsed only when asked for: a long history is mostly never read
 * again, so a start pays for finding its lines, not for an object per event. Ids and paths are
 * read without parsing the rest.
 */
export interface EventBacklog {
  readonly length: number;
  at(index: number): PulseEvent;
  idAt(index: number): string;
  pathAt(index: number): string;
}

const NO_BACKLOG: EventBacklog = {
  length: 0,
  at: (index) => {
    throw new RangeError(`no event ${index} in an empty backlog`);
  },
  idAt: (index) => NO_BACKLOG.at(index).id,
  pathAt: (index) => NO_BACKLOG.at(index).path,
};

/**
 * A lookup by id that must look further back than this from the end counts as deep; after a few
 * deep ones the full id map is built (and kept), rather than scanning again and again.
 */
const SCAN_LIMIT = 1000;
const DEEP_SCANS_BEFORE_MAP = 3;

interface Store {
  /** The log as loaded, positions 0 … backlog.length − 1. */
  backlog: EventBacklog;
  /** Events appended since, at positions from backlog.length on. */
  events: PulseEvent[];
  /** Position by id: built at the first append or after a few deep lookups, so a start never pays for it. */
  positions: Map<string, number> | null;
  /** Lookups that scanned further back than SCAN_LIMIT while there was no map. */
  deepScans: number;
}

/**
 * The in-memory index of `events.jsonl`: loaded once, appended to, never re-read, so a lookup
 * costs the same at 10 or 100,000 events. Each index is an immutable view (a prefix) of one
 * shared append-only store, so actor snapshots stay immutable without copying the log.
 */
export class EventIndex {
  readonly #store: Store;
  readonly #length: number;

  private constructor(store: Store, length: number) {
    this.#store = store;
    this.#length = length;
  }

  static from(events: Iterable<PulseEvent>): EventIndex {
    return EventIndex.empty().appended(events);
  }

  static empty(): EventIndex {
    return new EventIndex({ backlog: NO_BACKLOG, events: [], positions: new Map(), deepScans: 0 }, 0);
  }

  /**
   * The log as `readEventBacklog` found it, parsed as it is read. Unlike `from`, an id the file
   * holds twice (pulse never writes one twice) is kept twice: telling would mean reading every id.
   */
  static loaded(backlog: EventBacklog): EventIndex {
    return new EventIndex({ backlog, events: [], positions: null, deepScans: 0 }, backlog.length);
  }

  get size(): number {
    return this.#length;
  }

  get latest(): PulseEvent | undefined {
    return this.#length === 0 ? undefined : this.#at(this.#length - 1);
  }

  #at(position: number): PulseEvent {
    const { backlog, events } = this.#store;
    return position < backlog.length ? backlog.at(position) : events[position - backlog.length]!;
  }

  #idAt(position: number): string {
    const { backlog, events } = this.#store;
    return position < backlog.length ? backlog.idAt(position) : events[position - backlog.length]!.id;
  }

  #pathAt(position: number): string {
    const { backlog, events } = this.#store;
    return position < backlog.length ? backlog.pathAt(position) : events[position - backlog.length]!.path;
  }

  /** Every id's position, the first one kept for an id held twice; built once, then kept up to date by appends. */
  #positions(): Map<string, number> {
    const store = this.#store;
    if (store.positions !== null) return store.positions;
    const positions = new Map<string, number>();
    const total = store.backlog.length + store.events.length;
    for (let position = 0; position < total; position++) {
      const id = this.#idAt(position);
      if (!positions.has(id)) positions.set(id, position);
    }
    store.positions = positions;
    return positions;
  }

  /** A new view with `events` added; ids already present are skipped. */
  appended(events: Iterable<PulseEvent>): EventIndex {
    const store = this.#store;
    const total = () => store.backlog.length + store.events.length;
    if (total() !== this.#length) throw new Error('EventIndex: append to an outdated view');
    const adding = [...events];
    // A scan that found no change appends nothing: no reason to build the id map yet.
    if (adding.length === 0) return this;
    const positions = this.#positions();
    for (const event of adding) {
      if (positions.has(event.id)) continue;
      positions.set(event.id, total());
      store.events.push(event);
    }
    return total() === this.#length ? this : new EventIndex(store, total());
  }

  #position(id: string | null): number | undefined {
    if (id === null) return undefined;
    const store = this.#store;
    if (store.positions === null && store.deepScans < DEEP_SCANS_BEFORE_MAP) {
      // Most lookups are of recent events (the agent's last seen is the latest): look from the end.
      for (let position = this.#length - 1; position >= 0; position--) {
        if (this.#idAt(position) !== id) continue;
        if (this.#length - position > SCAN_LIMIT) store.deepScans++;
        return position;
      }
      if (this.#length > SCAN_LIMIT) store.deepScans++;
      return undefined;
    }
    const position = this.#positions().get(id);
    return position !== undefined && position < this.#length ? position : undefined;
  }

  get(id: string): PulseEvent | undefined {
    const position = this.#position(id);
    return position === undefined ? undefined : this.#at(position);
  }

  has(id: string): boolean {
    return this.#position(id) !== undefined;
  }

  #slice(from: number): readonly PulseEvent[] {
    const slice: PulseEvent[] = [];
    for (let position = from; position < this.#length; position++) slice.push(this.#at(position));
    return slice;
  }

  /** Events after `id`; all of them when `id` is null or unknown (as PulseAgent does). */
  after(id: string | null): readonly PulseEvent[] {
    return this.#slice((this.#position(id) ?? -1) + 1);
  }

  /** The number of events after `id`, without copying them. */
  countAfter(id: string | null): number {
    return this.#length - (this.#position(id) ?? -1) - 1;
  }

  /** The last `count` events after `id`, oldest first. */
  lastAfter(id: string | null, count: number): readonly PulseEvent[] {
    return this.#slice(Math.max((this.#position(id) ?? -1) + 1, this.#length - count));
  }

  recent(count: number): readonly PulseEvent[] {
    return this.#slice(Math.max(0, this.#length - count));
  }

  /** The last `count` events whose path passes `test`, newest first, looking back over `scan` events at most. */
  recentWhere(test: (path: string) => boolean, count: number, scan: number): PulseEvent[] {
    const found: PulseEvent[] = [];
    for (let position = this.#length - 1; position >= Math.max(0, this.#length - scan); position--) {
      if (!test(this.#pathAt(position))) continue;
      found.push(this.#at(position));
      if (found.length >= count) break;
    }
    return found;
  }

  /** The last event that touched `path`, if any. */
  lastFor(path: string): PulseEvent | undefined {
    for (let position = this.#length - 1; position >= 0; position--) {
      if (this.#pathAt(position) === path) return this.#at(position);
    }
    return undefined;
  }

  /**
   * Guidance/constraints events after the acknowledged one (or all of them when nothing
   * was acknowledged, or the acknowledged id is not in the log).
   */
  pendingAfter(acknowledgedId: string | null): PendingReplan {
    const files: string[] = [];
    let pendingEventId: string | null = null;
    // By path and id only: the events after an old ack need not be parsed.
    for (let position = (this.#position(acknowledgedId) ?? -1) + 1; position < this.#length; position++) {
      const path = this.#pathAt(position);
      if (!isInvalidating({ path })) continue;
      pendingEventId = this.#idAt(position);
      if (!files.includes(path)) files.push(path);
    }
    return { pendingEventId, pendingFiles: files };
  }
}
