import type { InboxEvent } from '../../machines/external.js';
import type { Drop } from '../../machines/inbox.js';
import { appendJsonLines, createWriteQueue, readJsonLines, rewriteJsonLines } from './jsonl-file.js';

type JournalRow = { op: 'insert'; event: InboxEvent } | { op: 'remove'; ids: string[]; why: string };

/**
 * The inbox's journal, `.pulse/inbox.jsonl`: inserts and removals, replayed on start and
 * compacted to the live events. Drops also go to `.pulse/dead-letters.jsonl` with the event.
 */
export class InboxFile {
  readonly #write = createWriteQueue();

  constructor(
    readonly path: string,
    readonly deadLetterPath: string,
  ) {}

  /**
   * The live events in insertion order, and every event the journal still records as inserted
   * (consumed ones too): the caller marks those seen before `compact`, so a crash between an
   * insert and its seen-marking cannot let an item in twice.
   */
  async load(): Promise<{ events: InboxEvent[]; inserted: InboxEvent[]; journalRows: number }> {
    const { rows, bad } = await readJsonLines(this.path);
    const live = new Map<string, InboxEvent>();
    const inserted: InboxEvent[] = [];
    for (const row of rows as JournalRow[]) {
      if (row?.op === 'insert' && typeof row.event?.id === 'string') {
        live.set(row.event.id, row.event);
        inserted.push(row.event);
      } else if (row?.op === 'remove' && Array.isArray(row.ids)) {
        for (const id of row.ids) live.delete(id);
      }
    }
    // Unparsable lines count as rows, so a torn tail forces a compaction: appended after it, the
    // next insert would share its line and be lost on the following load.
    return { events: [...live.values()], inserted, journalRows: rows.length + bad };
  }

  /** Rewrites the journal as the live events alone. */
  compact(events: readonly InboxEvent[]): Promise<void> {
    return this.#write(() =>
      rewriteJsonLines(
        this.path,
        events.map((event) => ({ op: 'insert', event })),
      ),
    );
  }

  insert(events: readonly InboxEvent[]): Promise<void> {
    return this.#write(() =>
      appendJsonLines(
        this.path,
        events.map((event) => ({ op: 'insert', event })),
      ),
    );
  }

  remove(ids: readonly string[], why: string): Promise<void> {
    if (ids.length === 0) return Promise.resolve();
    return this.#write(() => appendJsonLines(this.path, [{ op: 'remove', ids, why }]));
  }

  /** Records drops: the dead-letter line first, so an event is never gone from both files. */
  async drop(drops: readonly Drop[], at: string): Promise<void> {
    await appendJsonLines(
      this.deadLetterPath,
      drops.map((d) => ({ at, reason: d.reason, event: d.event })),
    );
    await this.remove(
      drops.map((d) => d.event.id),
      'dropped',
    );
  }
}
