import type { AnyActorRef, StateValue } from 'xstate';
import type { InboxEvent, ToolSafety } from '../../machines/external.js';
import type { FocusContext } from '../../machines/focus.js';
import type { GateContext, HoldReason } from '../../machines/gate-context.js';
import { GATE_DEFAULTS, type GateSettings } from '../../machines/gate-settings.js';
import type { DeadLetter, InboxContext } from '../../machines/inbox.js';
import { type FileFault, faultList } from '../../machines/log-faults.js';
import type { PollerContext } from '../../machines/poller.js';
import type { PulseActor } from '../../machines/pulse.js';
import { INVALIDATING_PATHS, type PulseEvent } from '../../machines/pulse-files.js';
import { needsReplan } from '../../machines/replan.js';
import type { ReplanAck } from '../../machines/replan-acks.js';
import type { AgentBook, TieWay } from '../../machines/replan-agents.js';
import { pollerId, type ServerSummary, type SourcesContext, sourceBlocked } from '../../machines/sources.js';
import type { WatcherContext } from '../../machines/watcher.js';
import { POLL_INTERVAL_MS } from '../effects/poll-folder.js';
import type { SessionFacts } from '../http/session-table.js';
import { type ThinkerStatus, thinkerInForce } from '../thinkers/thinker-in-force.js';
import { agentLabel } from './agent-label.js';
import { logOf, replanOf } from './ask-actors.js';

export interface PollerStatus {
  source: string;
  server: string;
  tool: string;
  enabled: boolean;
  state: string;
  /** Why it does not run: `enabled` is false, or its server is disabled (a `${VAR}` not set). */
  disabled_reason: string | null;
  interval_sec: number;
  polls: number;
  last_poll_at: string | null;
  last_duration_ms: number | null;
  next_poll_at: string | null;
  last_error: string | null;
  failures: number;
  items_seen: number;
  catch_ups: number;
  /** What its tool says of its side effects in `tools/list`, and what pulse does about it; null before a poll has read it. */
  tool_check: ToolSafety | null;
}

/** A configured server as `/status` and `pulse sources list` show it: never a secret. */
export interface ServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  /** The command line or URL as written (`${VAR}` unexpanded; a URL's password and query values masked). */
  target: string;
  /** The names of its env variables or headers; values are never shown. */
  env: string[];
  headers: string[];
  timeout_sec: number;
  /**
   * `connected` (its last call answered), `failing` (its last call failed), `starting` (no call
   * ended yet), `unused` (no enabled source uses it), `disabled` (a `${VAR}` is not set), or
   * `not running` (read from the file: no daemon runs).
   */
  state: 'connected' | 'failing' | 'starting' | 'unused' | 'disabled' | 'not running';
  /** The last error while failing, or why it is disabled. */
  detail: string | null;
}

/** What the sources supervisor shows: the config's error and warnings, its servers and its sources. */
export interface SourcesStatus {
  error: string | null;
  /** While `error` holds: true when pollers run on from an earlier good config, false when none runs. */
  keeps_last_good: boolean;
  warnings: string[];
  servers: ServerStatus[];
  pollers: PollerStatus[];
}

/** The live state of every actor, for `/status`, `pulse status` and `pulse sources list`. */
export interface SystemStatus {
  replan: {
    state: string;
    /** A change is pending, or pulse cannot see or record guidance/constraints changes (fail closed). */
    needs_replan: boolean;
    pending_replan_event_id: string | null;
    pending_replan_files: string[];
    /** Every agent working in the project and the change it still owes an ack, oldest first. */
    agents: ReplanAgentStatus[];
    last_acknowledged_event_id: string | null;
    /** The latest accepted acks, oldest first, each with what became of the plan (`summary`, `diff`). */
    acks: ReplanAck[];
    /** The latest guidance and constraints changes, newest first. */
    changes: Pick<PulseEvent, 'id' | 'path' | 'kind' | 'timestamp'>[];
  };
  log: {
    state: string;
    events: number;
    latest_event_id: string | null;
    last_error: string | null;
    warnings: string[];
    /** What pulse cannot see or record now, each file with why and the fix. */
    unobservable: FileFault[];
  };
  inbox: {
    /** Events not consumed yet: held in the inbox, or out with the gate (being judged, or on a lease). */
    size: number;
    /** Of those, the events out with the gate. */
    out: number;
    capacity: number;
    inserted: number;
    dropped: number;
    last_error: string | null;
  };
  sources: SourcesStatus;
  /** The user's focus from `.pulse/focus.json`: external events are held until `until` (null: no focus). */
  focus: { until: string | null; last_error: string | null };
  gate: GateStatus;
  /** Every actor by system id and the state it is in: the core actors, then the poller of each source that runs. */
  actors: ActorStatus[];
  /** The `.pulse/` file watcher: changes seen, its last error, and why it only polls while its watch is down. */
  watcher: {
    state: string;
    changes_seen: number;
    last_error: string | null;
    /** Why edits under `.pulse/` are only polled while the watch is tried again; null while it works. */
    down: string | null;
    /** Failed tries of the watch since it last worked. */
    failures: number;
  };
  /** The last events of `events.jsonl`, newest first: which file changed and how, never its text. */
  recent_events: Pick<PulseEvent, 'id' | 'path' | 'kind' | 'timestamp'>[];
  /** The open MCP sessions, oldest first: who is connected and when each last checked in. */
  agents: AgentStatus[];
}

/** One agent as the replan lifecycle knows it: its parties, how they were tied, and what it owes. */
export interface ReplanAgentStatus {
  id: string;
  /** Who it is, in words: its hook sessions, MCP sessions and names. */
  label: string;
  /** Its parties as keys: `session:<id>`, `hook:<host>:<id>`, `agent:<name>`, `one-shot`. */
  parties: string[];
  mcp_sessions: string[];
  /** Hook sessions as `<host>:<session id>`. */
  hook_sessions: string[];
  /** Names one-shot callers gave, and `one-shot` for PulseAgent's nameless client. */
  names: string[];
  /** The event it still owes an ack, or null. */
  owes: string | null;
  owes_files: string[];
  tied_by: TieWay | null;
  acked_at: string | null;
  /** Since when it owes (ISO), or null. */
  owing_since: string | null;
}

/** The replan's agents for `/status`. */
const replanAgentsStatus = (book: AgentBook): ReplanAgentStatus[] =>
  Object.entries(book).map(([id, agent]) => {
    const keys = Object.keys(agent.parties);
    const after = (prefix: string) =>
      keys.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
    return {
      id,
      label: agentLabel(keys),
      parties: keys,
      mcp_sessions: after('session:'),
      hook_sessions: after('hook:'),
      names: [...after('agent:'), ...keys.filter((k) => k === 'one-shot')],
      owes: agent.owes?.pendingEventId ?? null,
      owes_files: agent.owes?.pendingFiles ?? [],
      tied_by: agent.tiedBy,
      acked_at: agent.ackedAt,
      owing_since: agent.owingSince === null ? null : new Date(agent.owingSince).toISOString(),
    };
  });

/** An agent that still owes an ack, in words, and the change it owes. */
export interface OwingAgent {
  agent: string;
  owes: string;
}

/** The agents of a project that still owe an ack, oldest first: for the list of projects served. */
export const owingAgents = (actor: PulseActor): OwingAgent[] =>
  replanAgentsStatus(replanOf(actor).getSnapshot().context.agents).flatMap((agent) =>
    agent.owes === null ? [] : [{ agent: agent.label, owes: agent.owes }],
  );

export interface ActorStatus {
  id: string;
  state: string;
  /** The state value as XState holds it (null when stopped): the status page highlights it on the machine's diagram. */
  value: StateValue | null;
}

/** One open MCP session, as the status page lists connected agents. */
export interface AgentStatus {
  session: string;
  /** The client's own name and version from its `initialize`; null when it gave none. */
  client_name: string | null;
  client_version: string | null;
  /** The name given in its tool calls' `agent` argument; null while it gave none. */
  agent: string | null;
  connected_at: string;
  /** Its last request: a tool call, a read, or its notification stream opening. */
  last_request_at: string;
  /** The delivery of external events out to this session, or null when it holds none. */
  holds_delivery: string | null;
}

/** How many logged events `recent_events` lists (as many as the context resource shows). */
export const RECENT_EVENTS = 20;
/** How many guidance and constraints changes `replan.changes` lists, and how far back in the log it looks for them. */
const RECENT_CHANGES = 10;
const CHANGES_LOOK_BACK = 5000;

const brief = ({ id, path, kind, timestamp }: PulseEvent) => ({ id, path, kind, timestamp });

/** The actors the root starts, in the order a reader follows a change through them. */
const CORE_ACTORS = [
  'log',
  'replan',
  'watcher',
  'inbox',
  'gate',
  'focus',
  'sources',
  'hooks',
  'steer',
  'notify',
] as const;

/** One event as status shows it: the title, never the detail. */
export interface EventSummary {
  id: string;
  source: string;
  title: string;
  attempts: number;
}

export interface DeadLetterStatus extends EventSummary {
  at: string;
  reason: DeadLetter['reason'];
}

/** The reflection gate: what is out, what held it, and where events went. */
export interface GateStatus {
  state: string;
  /** The configured thinker, who judges now, and why when that is not it. */
  thinker: ThinkerStatus;
  /** The delivery set aside or out to an agent. */
  delivery: {
    delivery_id: string;
    /** Null while no agent has claimed it yet. */
    holder: string | null;
    lease_expires_at: string | null;
    events: Array<EventSummary & { urgency: number; why?: string }>;
  } | null;
  /** The last thought that judged events: which thinker, and its verdict and reason per event. */
  last_thought: {
    at: string;
    by: string;
    /** Why another thinker than the configured one judged (no client offers sampling). */
    note: string | null;
    events: Array<{
      id: string;
      source: string;
      title: string;
      urgency: number;
      why?: string;
      verdict: 'speak' | 'quiet';
    }>;
    unjudged: number;
  } | null;
  /** Failed thoughts in a row; while above 0 the gate backs off before asking the thinker again. */
  failed_in_a_row: number;
  replan_pending: boolean;
  last_gate: HoldReason | null;
  gated: Record<HoldReason, number>;
  reflections: number;
  delivered: number;
  consumed_silently: number;
  put_back: number;
  think_failures: number;
  last_error: string | null;
  settings: GateSettings;
  /** Events that left the inbox without being dealt with: the most recent, and how many this run. */
  dead_letters: DeadLetterStatus[];
  dead_lettered: number;
}

const summary = (e: InboxEvent): EventSummary => ({
  id: e.id,
  source: e.source,
  title: e.title,
  attempts: e.attempts,
});

export const deadLetterStatus = (d: DeadLetter): DeadLetterStatus => ({
  ...summary(d.event),
  at: d.at,
  reason: d.reason,
});

const gateStatus = (
  gate: { value: unknown; context: GateContext } | undefined,
  inbox: InboxContext | undefined,
  thinker: ThinkerStatus,
): GateStatus => {
  const c = gate?.context;
  const delivery = c?.delivery ?? null;
  return {
    state: gate ? stateName(gate.value) : 'stopped',
    thinker,
    delivery:
      delivery === null
        ? null
        : {
            delivery_id: delivery.deliveryId,
            holder: delivery.holder,
            lease_expires_at: iso(delivery.leaseExpiresAt),
            events: delivery.events.map((e) => ({
              ...summary(e),
              urgency: e.urgency,
              ...(e.why === undefined ? {} : { why: e.why }),
            })),
          },
    last_thought:
      c?.lastThought == null
        ? null
        : {
            at: new Date(c.lastThought.at).toISOString(),
            by: c.lastThought.by,
            note: c.lastThought.note,
            events: c.lastThought.judged,
            unjudged: c.lastThought.unjudged,
          },
    failed_in_a_row: c?.failedInARow ?? 0,
    replan_pending: c?.replanPending ?? false,
    last_gate: c?.lastGate ?? null,
    gated: c?.gated ?? { awaiting: 0, focus: 0, answering: 0, cooldown: 0 },
    reflections: c?.reflections ?? 0,
    delivered: c?.delivered ?? 0,
    consumed_silently: c?.consumedSilently ?? 0,
    put_back: c?.putBack ?? 0,
    think_failures: c?.thinkFailures ?? 0,
    last_error: c?.lastError ?? null,
    settings: {
      threshold: c?.threshold ?? GATE_DEFAULTS.threshold,
      cooldownMs: c?.cooldownMs ?? GATE_DEFAULTS.cooldownMs,
      leaseMs: c?.leaseMs ?? GATE_DEFAULTS.leaseMs,
      maxAttempts: c?.maxAttempts ?? GATE_DEFAULTS.maxAttempts,
      reflectEveryMs: c?.reflectEveryMs ?? GATE_DEFAULTS.reflectEveryMs,
      thinkTimeoutMs: c?.thinkTimeoutMs ?? GATE_DEFAULTS.thinkTimeoutMs,
      retryCapMs: c?.retryCapMs ?? GATE_DEFAULTS.retryCapMs,
    },
    dead_letters: (inbox?.deadLetters ?? []).map(deadLetterStatus),
    dead_lettered: inbox?.deadLettered ?? 0,
  };
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const stateName = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : Object.entries(value as Record<string, unknown>)
        .map(([k, v]) => `${k}.${stateName(v)}`)
        .join(',');

const snapshotOf = <C = unknown>(actor: PulseActor, systemId: string) =>
  (actor.system.get(systemId) as AnyActorRef | undefined)?.getSnapshot() as
    | { value: unknown; context: C }
    | undefined;

/** What `/healthz` and `pulse status` say while the `.pulse/` watch is down, given why. */
export const watchDownWarning = (down: string): string =>
  `the .pulse/ watch failed (${down}): its files are polled every ${POLL_INTERVAL_MS / 1000} s until it works again`;

/** The running system's `watchDownWarning`, or null while its watch works. */
export const watcherWarning = (actor: PulseActor): string | null => {
  const down = snapshotOf<WatcherContext>(actor, 'watcher')?.context.down ?? null;
  return down === null ? null : watchDownWarning(down);
};

/** What a sources.json error means for the pollers: whether an earlier good config keeps them running. */
export const configErrorEffect = (keepsLastGood: boolean): string =>
  keepsLastGood ? 'the last good config keeps running' : 'no source runs until it is fixed';

/** Why a source with `"enabled": false` does not run. */
export const DISABLED_IN_FILE = '"enabled": false in sources.json';

/** A server's summary with its state. */
export const serverStatus = (
  server: ServerSummary,
  { state, detail }: Pick<ServerStatus, 'state' | 'detail'>,
): ServerStatus => ({
  name: server.name,
  transport: server.transport,
  target: server.target,
  env: server.env,
  headers: server.headers,
  timeout_sec: server.timeoutMs / 1000,
  state,
  detail,
});

/** A running server's state, read from the last call of its sources' pollers. */
const serverState = (server: ServerSummary, pollers: readonly PollerStatus[]) => {
  if (server.disabled !== null) return { state: 'disabled' as const, detail: server.disabled };
  const running = pollers.filter((p) => p.server === server.name && p.disabled_reason === null);
  if (running.length === 0) return { state: 'unused' as const, detail: null };
  const last = running
    .filter((p) => p.last_poll_at !== null)
    .sort((a, b) => (a.last_poll_at! < b.last_poll_at! ? 1 : -1))[0];
  if (last === undefined) return { state: 'starting' as const, detail: null };
  return last.last_error === null
    ? { state: 'connected' as const, detail: null }
    : { state: 'failing' as const, detail: last.last_error };
};

/** What the HTTP layer knows beside the snapshots: its open MCP sessions, and the latest that can sample. */
export interface HttpFacts {
  sessions?: readonly SessionFacts[];
  /** The client name of the session the sampling thinker would ask, or null when none can sample. */
  sampler?: string | null;
}

/** Reads the snapshots, and what the HTTP layer knows (`HttpFacts`); sends nothing. */
export const systemStatus = (
  actor: PulseActor,
  { sessions = [], sampler = null }: HttpFacts = {},
): SystemStatus => {
  const log = logOf(actor).getSnapshot();
  const replan = replanOf(actor).getSnapshot();
  const inbox = (actor.system.get('inbox') as AnyActorRef | undefined)?.getSnapshot() as
    | { context: InboxContext }
    | undefined;
  const gate = (actor.system.get('gate') as AnyActorRef | undefined)?.getSnapshot() as
    | { value: unknown; context: GateContext }
    | undefined;
  const out = (gate?.context.batch.length ?? 0) + (gate?.context.delivery?.events.length ?? 0);
  const sources = (actor.system.get('sources') as AnyActorRef | undefined)?.getSnapshot() as
    | { context: SourcesContext }
    | undefined;
  const focus = (actor.system.get('focus') as AnyActorRef | undefined)?.getSnapshot() as
    | { context: FocusContext }
    | undefined;
  const watcher = snapshotOf<WatcherContext>(actor, 'watcher');
  // A focus that has run out while the daemon ran is over (the gate's own timer ended it).
  const focusUntil = focus?.context.until ?? null;
  const servers = sources?.context.servers ?? [];
  const pollers: PollerStatus[] = (sources?.context.sources ?? []).map((source) => {
    const ref = actor.system.get(pollerId(source.name)) as AnyActorRef | undefined;
    const snapshot = ref?.getSnapshot() as { value: unknown; context: PollerContext } | undefined;
    const c = snapshot?.context;
    const disabled = source.enabled ? sourceBlocked(source, servers) : DISABLED_IN_FILE;
    return {
      source: source.name,
      server: source.server,
      tool: source.tool,
      enabled: source.enabled,
      state: disabled !== null ? 'disabled' : snapshot ? stateName(snapshot.value) : 'stopped',
      disabled_reason: disabled,
      interval_sec: source.intervalMs / 1000,
      polls: c?.polls ?? 0,
      last_poll_at: iso(c?.lastPollAt ?? null),
      last_duration_ms: c && c.polls > 0 ? c.lastDurationMs : null,
      next_poll_at: iso(c?.nextPollAt ?? null),
      last_error: c?.lastError ?? null,
      failures: c?.failures ?? 0,
      items_seen: c?.itemsInserted ?? 0,
      catch_ups: c?.catchUps ?? 0,
      tool_check: c?.tool ?? null,
    };
  });
  return {
    replan: {
      state: stateName(replan.value),
      needs_replan: needsReplan(replan.context),
      pending_replan_event_id: replan.context.pendingEventId,
      pending_replan_files: replan.context.pendingFiles,
      agents: replanAgentsStatus(replan.context.agents),
      last_acknowledged_event_id: replan.context.lastAck?.eventId ?? null,
      acks: replan.context.acks,
      changes: log.context.index
        .recentWhere((path) => INVALIDATING_PATHS.has(path), RECENT_CHANGES, CHANGES_LOOK_BACK)
        .map(brief),
    },
    log: {
      state: stateName(log.value),
      events: log.context.index.size,
      latest_event_id: log.context.index.latest?.id ?? null,
      last_error: log.context.lastError,
      warnings: log.context.warnings,
      unobservable: faultList(log.context.faults),
    },
    inbox: {
      size: (inbox?.context.events.length ?? 0) + out,
      out,
      capacity: inbox?.context.capacity ?? 0,
      inserted: inbox?.context.inserted ?? 0,
      dropped: inbox?.context.dropped ?? 0,
      last_error: inbox?.context.lastError ?? null,
    },
    gate: gateStatus(
      gate,
      inbox?.context,
      thinkerInForce(sources?.context.thinker ?? { kind: 'rules', model: null }, sampler, {
        failedInARow: gate?.context.failedInARow ?? 0,
        lastFailure: gate?.context.lastFailure ?? null,
        maxAttempts: gate?.context.maxAttempts ?? GATE_DEFAULTS.maxAttempts,
        asking: gate !== undefined && ['reflecting', 'thinking'].includes(stateName(gate.value)),
      }),
    ),
    sources: {
      error: sources?.context.error ?? null,
      keeps_last_good:
        (sources?.context.error ?? null) !== null && (sources?.context.goodConfigLoaded ?? false),
      warnings: sources?.context.warnings ?? [],
      servers: servers.map((server) => serverStatus(server, serverState(server, pollers))),
      pollers,
    },
    focus: {
      until: focusUntil !== null && focusUntil > Date.now() ? iso(focusUntil) : null,
      last_error: focus?.context.lastError ?? null,
    },
    actors: [
      ...CORE_ACTORS.map((id) => {
        const snapshot = snapshotOf(actor, id);
        return {
          id,
          state: snapshot ? stateName(snapshot.value) : 'stopped',
          value: (snapshot?.value as StateValue | undefined) ?? null,
        };
      }),
      ...pollers
        .filter((p) => p.disabled_reason === null)
        .map(({ source, state }) => {
          const id = pollerId(source);
          return { id, state, value: (snapshotOf(actor, id)?.value as StateValue | undefined) ?? null };
        }),
    ],
    agents: sessions.map((session) => ({
      session: session.id,
      client_name: session.client?.name ?? null,
      client_version: session.client?.version ?? null,
      agent: session.agent,
      connected_at: new Date(session.connectedAt).toISOString(),
      last_request_at: new Date(session.lastRequestAt).toISOString(),
      holds_delivery:
        gate?.context.delivery?.holderSession === session.id ? gate.context.delivery.deliveryId : null,
    })),
    watcher: {
      state: watcher ? stateName(watcher.value) : 'stopped',
      changes_seen: watcher?.context.changesSeen ?? 0,
      last_error: watcher?.context.lastError ?? null,
      down: watcher?.context.down ?? null,
      failures: watcher?.context.failures ?? 0,
    },
    recent_events: log.context.index.recent(RECENT_EVENTS).map(brief).reverse(),
  };
};
