/** What pulse has already told one agent session through its hooks, so each thing is said once. */
export interface HookSessionMemory {
  /** The pending replan event a stop of this session was last held for. */
  stopHeldFor: string | null;
  /** The pending replan event this session was last told of as context (session start, a prompt). */
  toldPending: string | null;
  /** The delivery of external events this session was last told of. */
  toldDelivery: string | null;
}

export const FORGOTTEN_SESSION: HookSessionMemory = {
  stopHeldFor: null,
  toldPending: null,
  toldDelivery: null,
};

export interface HookSessionsContext {
  /** Keyed by `<agent>:<session id>`; insertion order is recency, oldest first. */
  sessions: Record<string, HookSessionMemory>;
  /** Sessions kept; past this the least recently heard is forgotten (and may hear a thing once more). */
  limit: number;
}

export type HookSessionsEvent = {
  type: 'hook.remember';
  session: string;
  /** Only the fields that changed; the rest are kept. */
  memory: Partial<HookSessionMemory>;
};

/** One session's memory, or a fresh one for a session never heard from. */
export const memoryOf = (context: HookSessionsContext, session: string): HookSessionMemory =>
  context.sessions[session] ?? FORGOTTEN_SESSION;
