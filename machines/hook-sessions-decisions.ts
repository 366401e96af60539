import type { PulseCall } from './hook-sessions-context.js';

/** pulse's tool calls kept in flight at most; past it the oldest is forgotten. */
export const PULSE_CALL_LIMIT = 200;

/**
 * How long an announced call may wait for its MCP request: longer than a user takes to approve
 * the call in a permission prompt, and a call the user denied (no post-tool hook) is forgotten after it.
 */
export const PULSE_CALL_TTL_MS = 10 * 60_000;

/** The calls in flight once `call` started: a session's earlier call of the same tool is replaced, the oldest dropped past the limit. */
export const startedCall = (calls: readonly PulseCall[], call: PulseCall): PulseCall[] =>
  [...calls.filter((c) => !(c.party === call.party && c.tool === call.tool)), call].slice(-PULSE_CALL_LIMIT);

/** The calls in flight once a session's call of `tool` ended. */
export const endedCall = (calls: readonly PulseCall[], party: string, tool: string): PulseCall[] =>
  calls.filter((c) => !(c.party === party && c.tool === tool));

/** What an MCP request without a handle says of itself, to find the hook session that announced it. */
export interface UnmarkedRequest {
  tool: string;
  /** The host's tool-call id the request carries (Claude Code's `_meta["claudecode/toolUseId"]`), if any. */
  useId: string | null;
  /** Whether a hook host may be the request's client (its `clientInfo` names no other product). */
  mayBeHost: (host: string) => boolean;
  now: number;
}

/**
 * The hook session whose pre-tool hook announced this request, or null: the one call with the same
 * tool-call id, else, for a request with none, the only call of that tool in flight from a host
 * its client may be, among calls that have no id (a host that sends the id is matched by it alone). Two such calls at once are two agents pulse cannot tell apart: null, never a guess.
 */
export const announcedCall = (calls: readonly PulseCall[], request: UnmarkedRequest): PulseCall | null => {
  const live = calls.filter((c) => c.tool === request.tool && request.now - c.at <= PULSE_CALL_TTL_MS);
  if (request.useId !== null) return live.find((c) => c.useId === request.useId) ?? null;
  const candidates = live.filter((c) => c.useId === null && request.mayBeHost(c.host));
  return candidates.length === 1 ? candidates[0]! : null;
};
