import type { SnapshotFrom, StateValue } from 'xstate';
import { partiesByKind } from '../../machines/agent-identity.js';
import type { InboxEvent } from '../../machines/external.js';
import { fleetSentence } from '../../machines/fleet-decisions.js';
import type { gateMachine } from '../../machines/gate.js';
import { GATE_DEFAULTS } from '../../machines/gate-settings.js';
import type { DeadLetter, InboxContext } from '../../machines/inbox-context.js';
import { faultList } from '../../machines/log-faults.js';
import type { PulseActor } from '../../machines/pulse.js';
import { INVALIDATING_PATHS, type PulseEvent } from '../../machines/pulse-files.js';
import type { PulseSystemActors, PulseSystemId } from '../../machines/pulse-system.js';
import { type AgentBook, agentIdOf, clientOf } from '../../machines/replan-agents.js';
import { needsReplan } from '../../machines/replan-decisions.js';
import { pollerId, type ServerSummary } from '../../machines/sources-context.js';
import { sourceBlocked } from '../../machines/sources-decisions.js';
import { POLL_INTERVAL_MS } from '../effects/poll-folder.js';
import { type ThinkerStatus, thinkerInForce } from '../thinkers/thinker-in-force.js';
import { lookUp, systemOf } from './actors.js';
import { agentLabel } from './agent-label.js';
import { logOf, replanOf } from './ask-actors.js';
import { DISABLED_IN_FILE, watchDownWarning } from './sentences.js';
import type { SessionFacts } from './session-table.js';
import {
  type DeadLetterStatus,
  type EventSummary,
  type FleetStatus,
  type GateStatus,
  type OwingAgent,
  type PollerStatus,
  RECENT_EVENTS,
  type ReplanAgentStatus,
  type ServerStatus,
  type SystemStatus,
} from './system-status.js';
import { untrustedOf } from './untrusted-notice.js';

/** The actor under `id`; undefined once the system has stopped. */
const systemActor = <K extends PulseSystemId>(actor: PulseActor, id: K): PulseSystemActors[K] | undefined =>
  lookUp(systemOf(actor), id);

/** The poller of `source`, while it runs. */
const pollerOf = (actor: PulseActor, source: string): PulseSystemActors[`poller:${string}`] | undefined =>
  lookUp(systemOf(actor), pollerId(source));

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
] as const satisfies readonly PulseSystemId[];

/** How many guidance and constraints changes `replan.changes` lists, and how far back in the log it looks for them. */
const RECENT_CHANGES = 10;
const CHANGES_LOOK_BACK = 5000;

const brief = ({ id, path, kind, timestamp }: PulseEvent) => ({ id, path, kind, timestamp });

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const stateName = (value: StateValue): string =>
  typeof value === 'string'
    ? value
    : Object.entries(value)
        .map(([k, v]) => (v === undefined ? k : `${k}.${stateName(v)}`))
        .join(',');

/** The replan's agents for `/status`. */
export const replanAgentsStatus = (book: AgentBook): ReplanAgentStatus[] =>
  Object.entries(book).map(([id, agent]) => {
    const keys = Object.keys(agent.parties);
    const client = clientOf(agent);
    return {
      id,
      label: agentLabel({ parties: keys, client }),
      parties: keys,
      ...partiesByKind(keys),
      client,
      owes: agent.owes?.pendingEventId ?? null,
      owes_files: agent.owes?.pendingFiles ?? [],
      tied_by: agent.tiedBy,
      acked_at: agent.ackedAt,
      owing_since: agent.owingSince === null ? null : new Date(agent.owingSince).toISOString(),
    };
  });

/** The agents of a project that still owe an ack, oldest first: for the list of projects served. */
export const owingAgents = (actor: PulseActor): OwingAgent[] =>
  replanAgentsStatus(replanOf(actor).getSnapshot().context.agents).flatMap((agent) =>
    agent.owes === null ? [] : [{ agent: agent.label, owes: agent.owes }],
  );

const summary = (e: InboxEvent): EventSummary => ({
  id: e.id,
  source: e.source,
  title: e.title,
  attempts: e.attempts,
});

/** A dead letter as status shows it: the event's title, never its detail. */
export const deadLetterStatus = (d: DeadLetter): DeadLetterStatus => ({
  ...summary(d.event),
  at: d.at,
  reason: d.reason,
});

/** A party as its user knows it, with the client its agent said it is. */
const partyLabel = (book: AgentBook, party: string): string => {
  const id = agentIdOf(book, party);
  return agentLabel({ parties: [party], client: id === undefined ? null : clientOf(book[id]!) });
};

const gateStatus = (
  gate: SnapshotFrom<typeof gateMachine> | undefined,
  inbox: InboxContext | undefined,
  thinker: ThinkerStatus,
  agents: AgentBook,
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
            holder_label: delivery.holder === null ? null : partyLabel(agents, delivery.holder),
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

/** The running system's `watchDownWarning` (`/healthz`), or null while its watch works. */
export const watcherWarning = (actor: PulseActor): string | null => {
  const down = systemActor(actor, 'watcher')?.getSnapshot().context.down ?? null;
  return down === null ? null : watchDownWarning(down, POLL_INTERVAL_MS / 1000);
};

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
  // A refused tool is the source's problem: the server answered its tools/list.
  return last.last_error === null || last.state === 'refused'
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
  const inbox = systemActor(actor, 'inbox')?.getSnapshot();
  const gate = systemActor(actor, 'gate')?.getSnapshot();
  const sources = systemActor(actor, 'sources')?.getSnapshot();
  const focus = systemActor(actor, 'focus')?.getSnapshot();
  const watcher = systemActor(actor, 'watcher')?.getSnapshot();
  // The inbox keeps the events drained and not settled yet: those out with the gate.
  const out = inbox?.context.out.length ?? 0;
  // A focus that has run out while the daemon ran is over (the gate's own timer ended it).
  const focusUntil = focus?.context.until ?? null;
  const servers = sources?.context.servers ?? [];
  const pollers: PollerStatus[] = (sources?.context.sources ?? []).map((source) => {
    const snapshot = pollerOf(actor, source.name)?.getSnapshot();
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
      replan.context.agents,
    ),
    sources: {
      untrusted: sources === undefined ? null : untrustedOf(sources.context),
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
        const value = systemActor(actor, id)?.getSnapshot().value ?? null;
        return { id, state: value === null ? 'stopped' : stateName(value), value };
      }),
      ...pollers
        .filter((p) => p.disabled_reason === null)
        .map(({ source, state }) => ({
          id: pollerId(source),
          state,
          value: pollerOf(actor, source)?.getSnapshot().value ?? null,
        })),
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
      poll_every_sec: POLL_INTERVAL_MS / 1000,
    },
    recent_events: log.context.index.recent(RECENT_EVENTS).map(brief).reverse(),
    ...fleetStatus(actor),
  };
};

/** The fleet actor's status, when the project is in a fleet (`pulse start --fleet`). */
const fleetStatus = (actor: PulseActor): { fleet?: FleetStatus } => {
  const fleet = systemActor(actor, 'fleet')?.getSnapshot();
  if (fleet === undefined) return {};
  const state = stateName(fleet.value);
  return { fleet: { ...fleet.context, state, sentence: fleetSentence(fleet.context, state) } };
};
