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

/**
 * One of pulse's own tools that a hook session's pre-tool hook announced and whose post-tool hook
 * has not come yet: the MCP request that follows is that session's, which is how pulse knows a
 * 2026-07-28 caller that passed no handle.
 */
export interface PulseCall {
  /** The hook session, as a party key. */
  party: string;
  /** The hook's host (`claude`, `copilot`, …), to check the MCP client is its product. */
  host: string;
  /** Which of pulse's tools (`pulse_ack_replan`, …). */
  tool: string;
  /** The host's id of this tool call, kept only for a host whose MCP requests carry it too (Claude Code's `tool_use_id`). */
  useId: string | null;
  /** When the pre-tool hook came (ms). */
  at: number;
}

export interface HookSessionsContext {
  /** Keyed by `<agent>:<session id>`; insertion order is recency, oldest first. */
  sessions: Record<string, HookSessionMemory>;
  /** Sessions kept; past this the least recently heard is forgotten (and may hear a thing once more). */
  limit: number;
  /** pulse's tool calls announced and not yet ended, oldest first, one per session and tool. */
  pulseCalls: PulseCall[];
}

export type HookSessionsEvent =
  | {
      type: 'hook.remember';
      session: string;
      /** Only the fields that changed; the rest are kept. */
      memory: Partial<HookSessionMemory>;
    }
  | { type: 'hook.pulseCallStarted'; call: PulseCall }
  | { type: 'hook.pulseCallEnded'; party: string; tool: string };

/** One session's memory, or a fresh one for a session never heard from. */
export const memoryOf = (context: HookSessionsContext, session: string): HookSessionMemory =>
  context.sessions[session] ?? FORGOTTEN_SESSION;
