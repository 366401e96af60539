import { type ClientInfo, isHookParty, outlivesRestart, type PartyKey, readParty } from './agent-identity.js';
import { mayBeOneAgent } from './agent-products.js';
import type { PendingReplan } from './event-index.js';
import type { PlanSnapshot } from './plan-diff.js';

/**
 * How pulse learned that two parties are one agent: pulse's own answer seen in the hook session's
 * input, the hook session named in a tool call's `agent`, the hook session whose pre-tool hook
 * announced the very MCP request (a 2026-07-28 caller that passed no handle), or by elimination (the
 * only hook session and the only MCP caller not yet tied to another when one of them arrived).
 */
export type TieWay = 'tool-output' | 'agent-argument' | 'hook-announced' | 'only-pair';

/** One party of an agent, and whether the session table tells when it ends or it is swept when idle. */
export interface Party {
  /** When pulse last heard from it (ms since the epoch); refreshed at most once a minute per party. */
  heardAt: number;
  /** An MCP session of this daemon: it leaves when the session closes, not when idle. */
  closes: boolean;
  /** What the client said it is (MCP `clientInfo`), when it said so. */
  client?: ClientInfo;
}

/** One agent working in the project: its parties and the change it still owes an ack. */
export interface Agent {
  parties: Record<PartyKey, Party>;
  /** The latest guidance or constraints change this agent must still acknowledge itself, or null. */
  owes: PendingReplan | null;
  /** How its parties were tied together, when there are several. */
  tiedBy: TieWay | null;
  /** When it acknowledged last (ISO), for the status lines. */
  ackedAt: string | null;
  /** Taken over from state.json after a restart: while it owes, so does a newcomer (it may be one of its parties, reconnected). */
  restored: boolean;
  /** The plan when it began to owe (what its ack's diff is against); null while it owes nothing. */
  planBase: PlanSnapshot | null;
  /** When it began to owe (ms since the epoch), for "held longer than"; null while it owes nothing. */
  owingSince: number | null;
}

/** What an agent that begins to owe a change is held against: the plan then, and the time. */
export interface OwingStart {
  plan: PlanSnapshot;
  /** When (ms since the epoch); null when the change's time does not read as one. */
  at: number | null;
}

/** The agents by id (the key of the party pulse heard first); oldest first. */
export type AgentBook = Record<string, Agent>;

/** Agents kept at most; past it the least recently heard ones are forgotten first. */
export const AGENT_LIMIT = 1000;

/** A party is told again as heard only after this long, so a busy agent costs no event per call. */
export const HEARD_REFRESH_MS = 60_000;

/** What state.json keeps of an agent, beside PulseAgent's fields. */
export interface SavedAgent {
  parties: PartyKey[];
  owes_event_id: string | null;
  owes_files: string[];
  acked_at: string | null;
  tied_by: TieWay | null;
}

/** The agent a party belongs to, or undefined when pulse has not heard from it. */
export const agentIdOf = (book: AgentBook, party: PartyKey): string | undefined => {
  if (book[party]?.parties[party] !== undefined) return party;
  for (const [id, agent] of Object.entries(book)) if (agent.parties[party] !== undefined) return id;
  return undefined;
};

/** Whether pulse would take a new message from this party as news (unknown, or not heard for a while). */
export const needsHearing = (book: AgentBook, party: PartyKey, now: number): boolean => {
  const id = agentIdOf(book, party);
  const heard = id === undefined ? undefined : book[id]!.parties[party];
  return heard === undefined || now - heard.heardAt >= HEARD_REFRESH_MS;
};

const union = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])];

const later = (a: PendingReplan, b: PendingReplan): PendingReplan => ({
  pendingEventId: (a.pendingEventId ?? '') > (b.pendingEventId ?? '') ? a.pendingEventId : b.pendingEventId,
  pendingFiles: union(a.pendingFiles, b.pendingFiles),
});

/** What some agent still owes (only those a restart took over, with `restored`), with the files; null when none owes. */
export const owedByAnyone = (book: AgentBook, { restored = false } = {}): PendingReplan | null => {
  let owed: PendingReplan | null = null;
  for (const agent of Object.values(book)) {
    if (agent.owes === null || (restored && !agent.restored)) continue;
    owed = owed ? later(owed, agent.owes) : agent.owes;
  }
  return owed;
};

const withoutOldest = (book: AgentBook): AgentBook => {
  const ids = Object.keys(book);
  if (ids.length <= AGENT_LIMIT) return book;
  const heard = (agent: Agent) => Math.max(...Object.values(agent.parties).map((p) => p.heardAt));
  const keep = new Set(ids.sort((a, b) => heard(book[b]!) - heard(book[a]!)).slice(0, AGENT_LIMIT));
  return Object.fromEntries(Object.entries(book).filter(([id]) => keep.has(id)));
};

/**
 * A party heard from: a new one is a new agent, which owes `pending` (what a newcomer owes while
 * the latest change is not acknowledged by everyone working) against the plan `base`; a known one
 * is marked heard.
 */
export const hear = (
  book: AgentBook,
  { party, at, closes, client }: { party: PartyKey; at: number; closes: boolean; client?: ClientInfo },
  pending: PendingReplan | null,
  base: PlanSnapshot,
): AgentBook => {
  const id = agentIdOf(book, party);
  if (id !== undefined) {
    const agent = book[id]!;
    const known = client ?? agent.parties[party]?.client;
    const heard: Party = { heardAt: at, closes, ...(known === undefined ? {} : { client: known }) };
    return { ...book, [id]: { ...agent, parties: { ...agent.parties, [party]: heard } } };
  }
  const agent: Agent = {
    parties: { [party]: { heardAt: at, closes, ...(client === undefined ? {} : { client }) } },
    owes: pending,
    tiedBy: null,
    ackedAt: null,
    restored: false,
    planBase: pending === null ? null : base,
    owingSince: pending === null ? null : at,
  };
  return tieLonePair(withoutOldest({ ...book, [party]: agent }));
};

/**
 * The only agent heard only through hooks and the only one heard only over MCP are one agent, unless
 * the MCP client named another known product: a single agent in a project is tied at once, whatever
 * its host's hooks show of pulse's tools. Never one a restart took over: its other half died with
 * the old process, and whoever came since may be another agent (evidence ties it: the answer in a
 * hook's input, the `agent` argument its held calls ask for, a hook-announced call).
 */
const tieLonePair = (book: AgentBook): AgentBook => {
  const hooksOnly: string[] = [];
  const mcpOnly: string[] = [];
  for (const [id, agent] of Object.entries(book)) {
    if (agent.restored) continue;
    const keys = Object.keys(agent.parties);
    if (keys.every(isHookParty)) hooksOnly.push(id);
    else if (!keys.some(isHookParty)) mcpOnly.push(id);
  }
  if (hooksOnly.length !== 1 || mcpOnly.length !== 1) return book;
  const client = clientOf(book[mcpOnly[0]!]!);
  const hosts = Object.keys(book[hooksOnly[0]!]!.parties).map((key) => readParty(key));
  // A client that named another product pulse knows (a second agent without hooks) is not this host's agent.
  const same = hosts.every((p) => p.kind === 'hook' && mayBeOneAgent(client, p.host));
  return same ? tie(book, mcpOnly[0]!, hooksOnly[0]!, 'only-pair') : book;
};

/** Drops parties, and the agents left with none: they are no longer waited for. */
const dropParties = (book: AgentBook, gone: (key: PartyKey, party: Party) => boolean): AgentBook => {
  const next: AgentBook = {};
  for (const [id, agent] of Object.entries(book)) {
    const parties = Object.fromEntries(Object.entries(agent.parties).filter(([key, p]) => !gone(key, p)));
    if (Object.keys(parties).length > 0) next[id] = { ...agent, parties };
  }
  return next;
};

/** A party that ended (its MCP session closed or expired). */
export const leave = (book: AgentBook, party: PartyKey): AgentBook =>
  dropParties(book, (key) => key === party);

/** Parties not heard from since `before` leave, except MCP sessions, whose end the session table tells. */
export const sweep = (book: AgentBook, before: number): AgentBook =>
  dropParties(book, (_, party) => !party.closes && party.heardAt < before);

/** Whether a sweep before `before` would drop any party. */
export const sweeps = (book: AgentBook, before: number): boolean =>
  Object.values(book).some((agent) =>
    Object.values(agent.parties).some((p) => !p.closes && p.heardAt < before),
  );

/**
 * Two parties are one agent: their agents merge. An ack either made frees both (it was this
 * agent's); otherwise the later change stands, with the files of both.
 */
export const tie = (book: AgentBook, a: PartyKey, b: PartyKey, by: TieWay): AgentBook => {
  const first = agentIdOf(book, a);
  const second = agentIdOf(book, b);
  if (first === undefined || second === undefined || first === second) return book;
  const x = book[first]!;
  const y = book[second]!;
  const owes = x.owes === null || y.owes === null ? null : later(x.owes, y.owes);
  // Held against the plan of whichever began to owe first.
  const earliest = owes === null ? null : (x.owingSince ?? 0) <= (y.owingSince ?? 0) ? x : y;
  const { [second]: _merged, ...rest } = book;
  return {
    ...rest,
    [first]: {
      parties: { ...x.parties, ...y.parties },
      owes,
      tiedBy: by,
      ackedAt: (x.ackedAt ?? '') > (y.ackedAt ?? '') ? x.ackedAt : y.ackedAt,
      restored: x.restored || y.restored,
      planBase: earliest?.planBase ?? null,
      owingSince: earliest?.owingSince ?? null,
    },
  };
};

/**
 * Every agent working now owes a new guidance or constraints change, with the files it changed;
 * one that owed nothing begins to owe now, against the plan `start` gives.
 */
export const owe = (
  book: AgentBook,
  latest: string,
  files: readonly string[],
  start: OwingStart,
): AgentBook =>
  Object.fromEntries(
    Object.entries(book).map(([id, agent]) => [
      id,
      {
        ...agent,
        owes: { pendingEventId: latest, pendingFiles: union(agent.owes?.pendingFiles ?? [], files) },
        planBase: agent.owes === null ? start.plan : agent.planBase,
        owingSince: agent.owes === null ? start.at : agent.owingSince,
      },
    ]),
  );

/** The agent of `party` acknowledged: it owes nothing more. */
export const acknowledge = (book: AgentBook, party: PartyKey, at: string): AgentBook => {
  const id = agentIdOf(book, party);
  return id === undefined
    ? book
    : { ...book, [id]: { ...book[id]!, owes: null, ackedAt: at, planBase: null, owingSince: null } };
};

/** The handle pulse minted for the agent `party` belongs to, if that agent has one. */
export const handleOfAgent = (book: AgentBook, party: PartyKey): string | undefined => {
  const id = agentIdOf(book, party);
  const parties = id === undefined ? [] : Object.keys(book[id]!.parties).map(readParty);
  return parties.find((p) => p.kind === 'handle')?.handle;
};

/** The client an agent's parties said it is (the first that said), or null. */
export const clientOf = (agent: Pick<Agent, 'parties'>): ClientInfo | null =>
  Object.values(agent.parties).find((party) => party.client !== undefined)?.client ?? null;

/** The agents as state.json keeps them. */
export const savedAgents = (book: AgentBook): SavedAgent[] =>
  Object.values(book).map((agent) => ({
    parties: Object.keys(agent.parties),
    owes_event_id: agent.owes?.pendingEventId ?? null,
    owes_files: agent.owes?.pendingFiles ?? [],
    acked_at: agent.ackedAt,
    tied_by: agent.tiedBy,
  }));

/**
 * Whether state.json must record these agents: two or more, or one with a party that outlives a
 * restart (a hook session, a handle, a name). A lone agent known only by MCP sessions needs no
 * record, since a restart owes it what the log owes; any other would be freed by the ack of an
 * agent that came first after the restart.
 */
export const recordsAgents = (agents: readonly SavedAgent[]): boolean =>
  agents.length > 1 || agents.some((agent) => agent.parties.some(outlivesRestart));

/**
 * The agents a restarted daemon takes over: MCP sessions died with the old process, so an agent
 * keeps only its hook sessions and names; one that was only sessions and still owes stays until
 * idle, so that the change stays owed for newcomers, never freed by the restart. One that owes is
 * held from the restart, against the plan then (the plan at the change died with the old process).
 */
export const restoredAgents = (
  saved: readonly SavedAgent[],
  start: OwingStart & { at: number },
  /** The changes logged after the last ack of any agent: every agent owes them, whatever state.json says. */
  unacknowledged: PendingReplan,
): AgentBook => {
  const { at } = start;
  const book: AgentBook = {};
  for (const entry of saved) {
    const lasting = entry.parties.filter(outlivesRestart);
    const keys = lasting.length > 0 ? lasting : entry.owes_event_id === null ? [] : entry.parties;
    if (keys.length === 0) continue;
    book[keys[0]!] = {
      parties: Object.fromEntries(keys.map((key) => [key, { heardAt: at, closes: false }])),
      owes:
        entry.owes_event_id === null
          ? null
          : { pendingEventId: entry.owes_event_id, pendingFiles: entry.owes_files },
      tiedBy: keys.length > 1 ? entry.tied_by : null,
      ackedAt: entry.acked_at,
      restored: true,
      planBase: entry.owes_event_id === null ? null : start.plan,
      owingSince: entry.owes_event_id === null ? null : at,
    };
  }
  return unacknowledged.pendingEventId === null
    ? book
    : Object.fromEntries(
        Object.entries(book).map(([id, agent]) => [
          id,
          {
            ...agent,
            owes: agent.owes === null ? unacknowledged : later(agent.owes, unacknowledged),
            planBase: agent.planBase ?? start.plan,
            owingSince: agent.owingSince ?? at,
          },
        ]),
      );
};
