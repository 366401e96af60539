/** A value a source's rules can test: text (cut to 200 characters), a number, a boolean or null. */
export type FieldValue = string | number | boolean | null;

/** One item as a source listed it, after extraction. */
export interface ExternalItem {
  itemId: string;
  title: string;
  startsAt: string | null;
  /** A link to the item, when the source gives one. */
  url?: string | null;
  detail: string;
  /** The values at the paths the source's rules test, by path. */
  fields?: Record<string, FieldValue>;
}

/** An item the inbox holds: what the source said, plus our stable id and when it arrived. */
export interface InboxEvent {
  /** Stable across restarts: derived from the source name and the source's item id. */
  id: string;
  source: string;
  item_id: string;
  title: string;
  starts_at: string | null;
  /** Absent in events written before pulse read links. */
  url?: string | null;
  /** The item's main fields first, cut to 500 characters; kept only when `store_detail` is on. */
  detail: string | null;
  /**
   * The values the source's rules test (path → value), taken when the item was polled: the
   * thinker judges long after the raw item is gone. Absent when the source has no field rules.
   */
  fields?: Record<string, FieldValue>;
  received_at: string;
  /** Failed delivery attempts so far. */
  attempts: number;
}

/** What a source's poller needs to know about it. */
export interface PolledSource {
  name: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  intervalMs: number;
  enabled: boolean;
}
