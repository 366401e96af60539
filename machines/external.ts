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
  /** The server its source polls (absent in events written before pulse recorded it). */
  server?: string;
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
  /** `"allow_side_effects": true`: its tool is polled even when it says it writes or destroys. */
  allowSideEffects?: boolean;
}

/** The hints a tool gives about itself in `tools/list` (MCP tool annotations), as it gave them. */
export interface ToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * What a source's tool says of its side effects, and what pulse does about it: polls a tool that
 * says it only reads; polls one that says nothing, with a warning; refuses one that says it
 * writes or destroys, unless the source allows side effects.
 */
export interface ToolSafety {
  /** The hints as the tool declared them; null when it declares no annotations at all. */
  hints: ToolHints | null;
  verdict: 'read_only' | 'undeclared' | 'allowed' | 'refused';
  /** The warning, the refusal with its fix, or why side effects are polled; null for a read-only tool. */
  message: string | null;
}

/**
 * An item a source listed that another source of the same server had listed first (the same
 * id, or the same link and title): not a second event, but said in the context.
 */
export interface AlsoListed {
  at: string;
  /** The source that listed it again. */
  source: string;
  /** The source whose event it is. */
  first: string;
  item_id: string;
  title: string;
}
