import type { StateValue } from 'xstate';
import type { ClientInfo } from '../../machines/agent-identity.js';
import type { ToolSafety } from '../../machines/external.js';
import type { FleetContext } from '../../machines/fleet-context.js';
import type { HoldReason } from '../../machines/gate-context.js';
import type { GateSettings } from '../../machines/gate-settings.js';
import type { DeadLetter } from '../../machines/inbox-context.js';
import type { FileFault } from '../../machines/log-faults.js';
import type { PulseEvent } from '../../machines/pulse-files.js';
import type { ReplanAck } from '../../machines/replan-acks.js';
import type { TieWay } from '../../machines/replan-agents.js';
import type { ThinkerStatus } from '../thinkers/thinker-in-force.js';

// What `/status` answers, and `pulse status`, `pulse sources list` and the status page read:
// the wire types only (system/read-status.ts fills them from the snapshots).

/** One source's poller: its config, its state and what its polls did. */
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

/** A sources.json its user has not trusted: what was not started, and the one command that trusts it. */
export interface UntrustedStatus {
  /** `sha256:<hex>` of the file's bytes, what `pulse start --trust-sources` takes. */
  hash: string;
  command: string;
  /** Its servers not started, by name. */
  servers: string[];
  /** Its model endpoint not asked (masked), or null. */
  model: string | null;
  /** What pulse did not do, in one sentence. */
  refused: string;
  /** `refused` and the command, the whole notice. */
  notice: string;
}

/** What the sources supervisor shows: the config's error and warnings, its servers and its sources. */
export interface SourcesStatus {
  /** Set while sources.json is not trusted: then nothing in it runs. */
  untrusted: UntrustedStatus | null;
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
    /** How often the files are polled while the watch is down, for the page's `watchDownWarning`. */
    poll_every_sec: number;
  };
  /** The last events of `events.jsonl`, newest first: which file changed and how, never its text. */
  recent_events: Pick<PulseEvent, 'id' | 'path' | 'kind' | 'timestamp'>[];
  /** The open MCP sessions, oldest first: who is connected and when each last checked in. */
  agents: AgentStatus[];
  /** With `pulse start --fleet`: the project's place in the fleet (`machines/fleet.ts`), never a credential. */
  fleet?: FleetStatus;
}

/** The fleet actor's context, its state, and the sentence `pulse status` prints. */
export type FleetStatus = FleetContext & { state: string; sentence: string };

/** One agent as the replan lifecycle knows it: its parties, how they were tied, and what it owes. */
export interface ReplanAgentStatus {
  id: string;
  /** Who it is, as its user knows it: `Claude Code 2.1.332 (session 3f2a9c01…)` (`agentLabel`). */
  label: string;
  /** Its parties as opaque keys (`machines/agent-identity.ts` reads them). */
  parties: string[];
  mcp_sessions: string[];
  /** Hook sessions as `<host>:<session id>`. */
  hook_sessions: string[];
  /** Handles pulse minted for it (a client without MCP sessions). */
  handles: string[];
  /** What its client said it is (MCP `clientInfo`), or null. */
  client: ClientInfo | null;
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

/** An agent that still owes an ack, in words, and the change it owes. */
export interface OwingAgent {
  agent: string;
  owes: string;
}

/** One actor by system id and the state it is in. */
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

/** How many logged events `recent_events` lists, and the MCP context resource with it. */
export const RECENT_EVENTS = 20;

/** One event as status shows it: the title, never the detail. */
export interface EventSummary {
  id: string;
  source: string;
  title: string;
  attempts: number;
}

/** An event given up on: when, and whether it ran out of attempts or was pushed out of a full inbox. */
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
    /** Null while no agent has claimed it yet: the holder's party key. */
    holder: string | null;
    /** The holder as its user knows it (`agentLabel`); absent from daemons before it. */
    holder_label?: string | null;
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
