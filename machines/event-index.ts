import { isInvalidating, type PulseEvent } from './pulse-files.js';

/** Where the replan lifecycle stands, derived from the log and the last ack. */
export interface PendingReplan {
  pendingEventId: string | null;
  pendingFiles: string[];
}

interface Store {
  events: PulseEvent[];
  positions: Map<string, number>;
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
    return new EventIndex({ events: [], positions: new Map() }, 0);
  }

  get size(): number {
    return this.#length;
  }

  get latest(): PulseEvent | undefined {
    return this.#length === 0 ? undefined : this.#store.events[this.#length - 1];
  }

  /** A new view with `events` added; ids already present are skipped. */
  appended(events: Iterable<PulseEvent>): EventIndex {
    const store = this.#store;
    if (store.events.length !== this.#length) throw new Error('EventIndex: append to an outdated view');
    for (const event of events) {
      if (store.positions.has(event.id)) continue;
      store.positions.set(event.id, store.events.length);
      store.events.push(event);
    }
    return store.events.length === this.#length ? this : new EventIndex(store, store.events.length);
  }

  #position(id: string | null): number | undefined {
    if (id === null) return undefined;
    const position = this.#store.positions.get(id);
    return position !== undefined && position < this.#length ? position : undefined;
  }

  get(id: string): PulseEvent | undefined {
    const position = this.#position(id);
    return position === undefined ? undefined : this.#store.events[position];
  }

  has(id: string): boolean {
    return this.#position(id) !== undefined;
  }

  #slice(from: number): readonly PulseEvent[] {
    return this.#store.events.slice(from, this.#length);
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

  /** The last event that touched `path`, if any. */
  lastFor(path: string): PulseEvent | undefined {
    for (let i = this.#length - 1; i >= 0; i--) {
      const event = this.#store.events[i]!;
      if (event.path === path) return event;
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
    for (const event of this.after(acknowledgedId)) {
      if (!isInvalidating(event)) continue;
      pendingEventId = event.id;
      if (!files.includes(event.path)) files.push(event.path);
    }
    return { pendingEventId, pendingFiles: files };
  }
}
