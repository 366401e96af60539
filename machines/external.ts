/** One item as a source listed it, after extraction. */
export interface ExternalItem {
  itemId: string;
  title: string;
  startsAt: string | null;
  detail: string;
}

/** An item the inbox holds: what the source said, plus our stable id and when it arrived. */
export interface InboxEvent {
  /** Stable across restarts: derived from the source name and the source's item id. */
  id: string;
  source: string;
  item_id: string;
  title: string;
  starts_at: string | null;
  /** The raw item cut to 500 characters; kept only when `store_detail` is on. */
  detail: string | null;
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
