/**
 * Who is calling, in one place: the ways pulse hears from an agent, their constructors and
 * readers, and the one order in which a tool call's marks choose among them. Every other module
 * holds a party as an opaque key and asks this one what it is; only here is its string form known
 * (it is also what state.json keeps, so it never changes shape).
 */

/** One way pulse hears from an agent, as a key of the agent book (an opaque string outside this module). */
export type PartyKey = string;

/** The hosts whose hook sessions are parties (`pulse hook <host>`), passed in by whoever knows them. */
export type HookHostCheck = (host: string) => boolean;

/** What a client says it is: the MCP `clientInfo` it sent (a name and a version, both its own words). */
export interface ClientInfo {
  name: string;
  version: string;
  /** The MCP revision it speaks: negotiated by a session's `initialize`, or named in each 2026-07-28 request's `_meta`. */
  protocol?: string;
}

/** A party read back: what kind of party it is and what identifies it. */
export type AgentIdentity =
  /** An MCP session of this daemon (`Mcp-Session-Id`): it ends when the session closes. */
  | { kind: 'session'; id: string }
  /** A handle pulse minted and returned from `pulse_should_interrupt`, passed back by a client without MCP sessions. */
  | { kind: 'handle'; handle: string }
  /** An agent host's hook session (the hook input's session id), e.g. Claude Code's. */
  | { kind: 'hook'; host: string; session: string }
  /** The `agent` name a one-shot caller passed. */
  | { kind: 'named'; name: string }
  /** PulseAgent's nameless one-shot client: every caller that gives no mark at all. */
  | { kind: 'one-shot' };

const SESSION = 'session:';
const HANDLE = 'handle:';
const HOOK = 'hook:';
const NAMED = 'agent:';

/** The party an MCP session is. */
export const sessionParty = (id: string): PartyKey => `${SESSION}${id}`;

/** The party a handle pulse minted is. */
export const handleParty = (handle: string): PartyKey => `${HANDLE}${handle}`;

/** The party a host's hook session is. */
export const hookParty = (host: string, session: string): PartyKey => `${HOOK}${host}:${session}`;

/** The party a one-shot caller's `agent` name is. */
export const namedParty = (name: string): PartyKey => `${NAMED}${name}`;

/** The party a caller that gives no mark at all is: PulseAgent's one client. */
export const ONE_SHOT: PartyKey = 'one-shot';

/** What a party key says (an unknown shape reads as a name, so nothing is lost). */
export const readParty = (key: PartyKey): AgentIdentity => {
  if (key === ONE_SHOT) return { kind: 'one-shot' };
  if (key.startsWith(SESSION)) return { kind: 'session', id: key.slice(SESSION.length) };
  if (key.startsWith(HANDLE)) return { kind: 'handle', handle: key.slice(HANDLE.length) };
  if (key.startsWith(HOOK)) {
    const rest = key.slice(HOOK.length);
    const colon = rest.indexOf(':');
    return { kind: 'hook', host: rest.slice(0, colon), session: rest.slice(colon + 1) };
  }
  return { kind: 'named', name: key.startsWith(NAMED) ? key.slice(NAMED.length) : key };
};

/** Whether a party is a host's hook session. */
export const isHookParty = (key: PartyKey): boolean => key.startsWith(HOOK);

/** Whether a party outlives the daemon's process: everything but an MCP session, which died with it. */
export const outlivesRestart = (key: PartyKey): boolean => !key.startsWith(SESSION);

/**
 * The hook session an `agent` argument names (`<host>:<session>`, as pulse's held tool calls give
 * it), or null when it names none.
 */
export const hookPartyNamed = (name: string | undefined, isHost: HookHostCheck): PartyKey | null => {
  if (name === undefined) return null;
  const colon = name.indexOf(':');
  if (colon <= 0 || colon === name.length - 1) return null;
  return isHost(name.slice(0, colon)) ? `${HOOK}${name}` : null;
};

/** The marks a tool call carries that can say who makes it. */
export interface CallerMarks {
  /** Its MCP session, when it has one. */
  session?: string | undefined;
  /** The handle it passed back, minted by pulse for a caller without sessions. */
  handle?: string | undefined;
  /** The `agent` argument: a name, or a hook session (`claude:<session>`). */
  name?: string | undefined;
  /**
   * What a 2026-07-28 request's `_meta` says of its client (`clientInfo`, the revision): such a
   * caller has no session, and two of them may send the same `clientInfo`, so it names the agent
   * and never tells one apart from another.
   */
  client?: ClientInfo | undefined;
  /** The agent's own id of this tool call, when its client sends it in `_meta` (Claude Code's `claudecode/toolUseId`). */
  useId?: string | undefined;
}

/**
 * Whether pulse must mint a handle to know this caller by: a 2026-07-28 caller that gives no
 * session, handle or name would otherwise be the one-shot client, one agent with every other.
 */
export const needsHandle = ({ session, handle, name, client }: CallerMarks): boolean =>
  client !== undefined && session === undefined && handle === undefined && name === undefined;

/**
 * The one order of precedence for who makes a tool call: its MCP session, else the handle it
 * passed back, else the hook session its `agent` names, else that name, else the one-shot client.
 */
export const callerParty = ({ session, handle, name }: CallerMarks, isHost: HookHostCheck): PartyKey => {
  if (session !== undefined) return sessionParty(session);
  if (handle !== undefined) return handleParty(handle);
  return hookPartyNamed(name, isHost) ?? (name !== undefined ? namedParty(name) : ONE_SHOT);
};

/** Parties sorted by kind, as `/status` lists them: session ids, `<host>:<session>` hook sessions, handles, names (`one-shot` among them). */
export const partiesByKind = (keys: readonly PartyKey[]) => {
  const sorted = {
    mcp_sessions: [] as string[],
    hook_sessions: [] as string[],
    handles: [] as string[],
    names: [] as string[],
  };
  for (const key of keys) {
    const p = readParty(key);
    if (p.kind === 'session') sorted.mcp_sessions.push(p.id);
    else if (p.kind === 'hook') sorted.hook_sessions.push(`${p.host}:${p.session}`);
    else if (p.kind === 'handle') sorted.handles.push(p.handle);
    else sorted.names.push(p.kind === 'named' ? p.name : ONE_SHOT);
  }
  return sorted;
};
