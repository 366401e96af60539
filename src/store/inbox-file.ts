import type { InboxEvent } from '../../machines/external.js';
import type { DeadLetter, Settlement } from '../../machines/inbox-context.js';
import {
  appendJsonLines,
  createWriteQueue,
  cutTornTail,
  readJsonLines,
  rewriteJsonLines,
} from './jsonl-file.js';

type JournalRow =
  | { op: 'insert'; event: InboxEvent }
  | { op: 'remove'; ids: string[]; why: string }
  | { op: 'attempts'; attempts: Record<string, number> };

/** How many dead letters a load returns (the most recent); the file keeps them all. */
export const DEAD_LETTERS_LOADED = 50;

/**
 * The inbox's journal, `.pulse/inbox.jsonl`: inserts, removals and attempt counts, replayed on
 * start and compacted to the live events. Dead letters go to `.pulse/dead-letters.jsonl` with
 * the whole event, written before the journal forgets it, so it is never gone from both files.
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
      } else if (row?.op === 'attempts' && typeof row.attempts === 'object' && row.attempts !== null) {
        for (const [id, attempts] of Object.entries(row.attempts)) {
          const event = live.get(id);
          if (event !== undefined && Number.isInteger(attempts)) live.set(id, { ...event, attempts });
        }
      }
    }
    // Unparsable lines count as rows, so a torn tail forces a compaction: appended after it, the
    // next insert would share its line and be lost on the following load.
    return { events: [...live.values()], inserted, journalRows: rows.length + bad };
  }

  /**
   * Cuts what a crash tore off the end of the dead letters, before anything is appended to them.
   * A torn dead letter is still live in the journal: it was written before its removal.
   */
  repairDeadLetters(): Promise<void> {
    return this.#write(() => cutTornTail(this.deadLetterPath));
  }

  /** The most recent dead letters, oldest first. */
  async loadDeadLetters(limit = DEAD_LETTERS_LOADED): Promise<DeadLetter[]> {
    const { rows } = await readJsonLines(this.deadLetterPath);
    return (rows as DeadLetter[])
      .filter((row) => typeof row?.event?.id === 'string' && typeof row.at === 'string')
      .slice(-limit);
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

  /**
   * Records one settlement in a single journal append: consumed events removed, put-back events'
   * attempt counts, and dead letters (their own file first, then removed from the journal).
   */
  settle(
    settlement: Pick<Settlement, 'consumed' | 'putBack'>,
    deadLetters: readonly DeadLetter[],
  ): Promise<void> {
    const rows: JournalRow[] = [];
    if (settlement.consumed.length > 0)
      rows.push({ op: 'remove', ids: [...settlement.consumed], why: 'consumed' });
    if (settlement.putBack.length > 0) {
      rows.push({
        op: 'attempts',
        attempts: Object.fromEntries(settlement.putBack.map((e) => [e.id, e.attempts])),
      });
    }
    if (deadLetters.length > 0)
      rows.push({ op: 'remove', ids: deadLetters.map((d) => d.event.id), why: 'dead letter' });
    return this.#write(async () => {
      await appendJsonLines(this.deadLetterPath, deadLetters);
      await appendJsonLines(this.path, rows);
    });
  }
}
