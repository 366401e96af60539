import { lstatSync } from 'node:fs';
import { sessionParty } from '../../machines/agent-identity.js';
import { EventIndex } from '../../machines/event-index.js';
import { EVENTS_PATH, STATE_PATH } from '../../machines/log-faults.js';
import { eventPath, INVALIDATING_PATHS, PULSE_FILES } from '../../machines/pulse-files.js';
import type { ReplanAck } from '../../machines/replan-acks.js';
import { POLL_INTERVAL_MS } from '../effects/poll-folder.js';
import { findDaemon, NOT_RUNNING, onPort } from '../hooks/find-daemon.js';
import { pulse, shellWord } from '../package/pulse-command.js';
import type { Discovery } from '../store/daemon-record.js';
import { DaemonTokenError, tokenHeaders, tokenRefusal } from '../store/daemon-token.js';
import { readEventBacklog } from '../store/event-log-file.js';
import { formatFocusEnd, readFocus } from '../store/focus-file.js';
import { InboxFile } from '../store/inbox-file.js';
import type { PulsePaths } from '../store/paths.js';
import { requirePulseFolder } from '../store/pulse-folder.js';
import { readJournal, refusalOf, UnreadableFileError } from '../store/read-bounded.js';
import { folderProblem } from '../store/real-folder.js';
import { acksOf } from '../store/state-file.js';
import { agentLabel } from '../system/agent-label.js';
import { deadLetterStatus } from '../system/read-status.js';
import { configErrorEffect, watchDownWarning } from '../system/sentences.js';
import type {
  AgentStatus,
  DeadLetterStatus,
  GateStatus,
  PollerStatus,
  ReplanAgentStatus,
  SystemStatus,
} from '../system/system-status.js';
import { terminalText } from '../text/terminal-text.js';
import { thinkerLine } from '../thinkers/thinker-in-force.js';

/** What `pulse status` reports, from the running daemon or, when none runs, from the files. */
export interface StatusReport {
  project: string;
  daemon: { running: boolean; url: string | null; pid: number | null; version: string | null };
  needs_replan: boolean;
  pending_replan_event_id: string | null;
  pending_replan_files: string[];
  latest_event_id: string | null;
  events: number;
  last_acknowledged_event_id: string | null;
  last_acknowledged_plan_sha256: string | null;
  last_acknowledged_at: string | null;
  /** Only from a running daemon: the agents working and the change each still owes. */
  owing?: ReplanAgentStatus[];
  /** Only from a running daemon: every agent working, 2026-07-28 ones (no session) among them. */
  working?: ReplanAgentStatus[];
  /** The latest accepted acks, oldest first, each with what became of the plan (from the daemon, else state.json). */
  acks: ReplanAck[];
  warnings: string[];
  /** What pulse cannot see or record now: from a running daemon, else the files it would refuse (needs_replan is true while any hides guidance). */
  unobservable?: SystemStatus['log']['unobservable'];
  /** Only from a running daemon. */
  inbox?: SystemStatus['inbox'];
  sources?: SystemStatus['sources'];
  /** From the running daemon, else from `.pulse/focus.json`. */
  focus?: SystemStatus['focus'];
  /** Only from a running daemon. */
  gate?: SystemStatus['gate'];
  /** Only from a running daemon started with `--fleet`. */
  fleet?: SystemStatus['fleet'];
  /** Only from a running daemon: its open MCP sessions, oldest first. */
  agents?: SystemStatus['agents'];
  /** The most recent dead letters: from the running daemon, else from `.pulse/dead-letters.jsonl`. */
  dead_letters: DeadLetterStatus[];
}

/**
 * `pulse status` for a `.pulse/` that is a symlink or no folder: nothing is read through it, the
 * report says what is wrong (null when the folder is usable, or not there at all).
 */
const unusableFolder = (paths: PulsePaths): StatusReport | null => {
  const reason = folderProblem(paths.dir);
  if (reason === null || lstatSync(paths.dir, { throwIfNoEntry: false }) === undefined) return null;
  return {
    project: paths.projectRoot,
    daemon: { running: false, url: null, pid: null, version: null },
    needs_replan: true,
    pending_replan_event_id: null,
    pending_replan_files: [],
    latest_event_id: null,
    events: 0,
    last_acknowledged_event_id: null,
    last_acknowledged_plan_sha256: null,
    last_acknowledged_at: null,
    acks: [],
    warnings: [],
    unobservable: [{ file: '.pulse/', reason }],
    dead_letters: [],
  };
};

/**
 * The running daemon's `/status`, or null when none answers; throws `DaemonTokenError` when it
 * answers but wants a token (PULSE_TOKEN) it was not given.
 */
export const fetchSystemStatus = async (discovery: Discovery): Promise<SystemStatus | null> => {
  let response: Response;
  try {
    response = await fetch(new URL('status', discovery.url), {
      headers: tokenHeaders(),
      signal: AbortSignal.timeout(2000),
    });
  } catch {
    return null;
  }
  if (response.status === 401) throw new DaemonTokenError(tokenRefusal(discovery.url));
  return response.ok ? ((await response.json().catch(() => null)) as SystemStatus | null) : null;
};

const readState = async (path: string): Promise<Record<string, unknown>> => {
  try {
    const parsed = JSON.parse((await readJournal(path))?.toString('utf8') ?? '{}');
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
};

/**
 * The files the daemon would refuse to read (a symlink, a folder, a FIFO…), found by lstat alone,
 * each as a problem line; without a daemon this is how `pulse status` names them.
 */
const refusedFiles = async (paths: PulsePaths): Promise<NonNullable<StatusReport['unobservable']>> => {
  const files: [string, string][] = [
    ...PULSE_FILES.map((name): [string, string] => [eventPath(name), paths.file(name)]),
    [EVENTS_PATH, paths.events],
    [STATE_PATH, paths.state],
  ];
  const refused = await Promise.all(
    files.map(async ([file, path]) => {
      const refusal = await refusalOf(path);
      return refusal === null ? [] : [{ file, reason: refusal.message }];
    }),
  );
  return refused.flat();
};

const str = (value: unknown) => (typeof value === 'string' ? value : null);

/**
 * Reads status without writing anything, so it is safe beside a running daemon. A folder that is
 * not there, or has no `.pulse/`, is an error with the fix: answering "nothing pending" there
 * would hide a replan pending in the project the user meant.
 */
export const readStatus = async (paths: PulsePaths, port?: number): Promise<StatusReport> => {
  const unusable = unusableFolder(paths);
  if (unusable !== null) return unusable;
  requirePulseFolder(paths);
  const found = findDaemon(paths.projectRoot, paths.projectRoot);
  const discovery = 'discovery' in found ? onPort(found.discovery, found.project, port) : null;
  const live = discovery ? await fetchSystemStatus(discovery) : null;
  const state = await readState(paths.state);
  const daemon = {
    running: live !== null,
    url: live ? discovery!.url : null,
    pid: live ? discovery!.pid : null,
    version: live ? discovery!.version : null,
  };
  if (live) {
    return {
      project: paths.projectRoot,
      daemon,
      needs_replan: live.replan.needs_replan ?? live.replan.pending_replan_event_id !== null,
      pending_replan_event_id: live.replan.pending_replan_event_id,
      pending_replan_files: live.replan.pending_replan_files,
      latest_event_id: live.log.latest_event_id,
      events: live.log.events,
      last_acknowledged_event_id: live.replan.last_acknowledged_event_id,
      owing: (live.replan.agents ?? []).filter((agent) => agent.owes !== null),
      working: live.replan.agents ?? [],
      acks: live.replan.acks ?? [],
      last_acknowledged_plan_sha256: str(state.last_acknowledged_plan_sha256),
      last_acknowledged_at: str(state.last_acknowledged_at),
      warnings: live.watcher.down
        ? [...live.log.warnings, watchDownWarning(live.watcher.down, POLL_INTERVAL_MS / 1000)]
        : live.log.warnings,
      unobservable: live.log.unobservable ?? [],
      inbox: live.inbox,
      sources: live.sources,
      focus: live.focus,
      gate: live.gate,
      agents: live.agents,
      dead_letters: live.gate.dead_letters,
      ...(live.fleet ? { fleet: live.fleet } : {}),
    };
  }
  const refused = await refusedFiles(paths);
  // A refused log is named below, never read through: nothing can be said pending from it.
  const log = await readEventBacklog(paths.events, { repair: false }).catch((error: unknown) => {
    if (error instanceof UnreadableFileError) return null;
    throw error;
  });
  // A daemon record that was there but not used: said, since the hooks do not enforce meanwhile.
  const ignored = 'problem' in found && found.problem !== NOT_RUNNING ? [`daemon: ${found.problem}`] : [];
  const warnings = [...ignored, ...(log?.warnings ?? [])];
  const index = log === null ? EventIndex.empty() : EventIndex.loaded(log.backlog);
  const ackId = str(state.last_acknowledged_event_id);
  const pending = index.pendingAfter(ackId);
  const blind = refused.some(({ file }) => file === EVENTS_PATH || INVALIDATING_PATHS.has(file));
  const focus = await readFocus(paths.dir).then(
    ({ until }) => ({ until: until === null ? null : new Date(until).toISOString(), last_error: null }),
    (error: Error) => ({ until: null, last_error: error.message }),
  );
  return {
    project: paths.projectRoot,
    daemon,
    needs_replan: pending.pendingEventId !== null || blind,
    pending_replan_event_id: pending.pendingEventId,
    pending_replan_files: pending.pendingFiles,
    latest_event_id: index.latest?.id ?? null,
    events: index.size,
    last_acknowledged_event_id: ackId,
    last_acknowledged_plan_sha256: str(state.last_acknowledged_plan_sha256),
    last_acknowledged_at: str(state.last_acknowledged_at),
    acks: acksOf(state),
    warnings,
    ...(refused.length > 0 ? { unobservable: refused } : {}),
    focus,
    dead_letters: (await new InboxFile(paths.inbox, paths.deadLetters).loadDeadLetters().catch(() => [])).map(
      deadLetterStatus,
    ),
  };
};

/** The readable form of a status report at `now`, safe for a terminal whatever the sources and clients sent. */
export const formatStatus = (report: StatusReport, now = Date.now(), showFleet = false): string => {
  const lines = [
    `project:   ${report.project}`,
    `daemon:    ${report.daemon.running ? `running (pid ${report.daemon.pid}) at ${report.daemon.url}` : `not running (start it with \`${pulse(`start -p ${shellWord(report.project)}`)}\`)`}`,
    ...formatAgents(report.agents, now),
    `replan:    ${report.pending_replan_event_id !== null ? `PENDING — ${report.pending_replan_event_id} (${report.pending_replan_files.join(', ')})` : report.needs_replan ? 'ON HOLD — pulse cannot see or record guidance changes (below)' : 'nothing pending'}`,
    ...(report.owing ?? []).map((agent) => `owes ack:  ${terminalText(agent.label)} owes ${agent.owes}`),
    ...(report.working ?? [])
      .filter((agent) => agent.client?.protocol !== undefined)
      .map(
        (agent) => `speaks:    ${terminalText(agent.label)}: MCP ${terminalText(agent.client!.protocol!)}`,
      ),
    ...(report.unobservable ?? []).map(({ file, reason }) => `problem:   ${file} ${reason}`),
    `events:    ${report.events}${report.latest_event_id ? `, latest ${report.latest_event_id}` : ''}`,
    `last ack:  ${report.last_acknowledged_event_id ? `${report.last_acknowledged_event_id} at ${report.last_acknowledged_at ?? '?'} (plan ${report.last_acknowledged_plan_sha256?.slice(0, 12) ?? 'none'})` : 'none'}`,
    ...formatAcks(report.acks, now),
  ];
  if (report.fleet) lines.push(`fleet:     ${terminalText(report.fleet.sentence)}`);
  if (report.fleet && showFleet)
    lines.push(
      ...report.fleet.members.flatMap((m) => [
        `member:    ${terminalText(m.machine)}, seen ${m.seenAt}`,
        ...(m.agents ?? []).map(
          (a) =>
            `  agent:   ${terminalText(a.label)}${a.owes === null ? ', acknowledged all' : `, still owes ${a.owes}`}`,
        ),
      ]),
    );
  if (report.inbox) {
    lines.push(
      `inbox:     ${report.inbox.size}/${report.inbox.capacity} events (${report.inbox.out ?? 0} out to the agent), ${report.inbox.inserted} received, ${report.inbox.dropped} dropped`,
    );
  }
  if (report.focus) {
    lines.push(
      `focus:     ${report.focus.until ? `quiet until ${formatFocusEnd(report.focus.until)} (${pulse('focus off')} ends it)` : 'off'}${report.focus.last_error ? `; ERROR ${report.focus.last_error}` : ''}`,
    );
  }
  if (report.gate) lines.push(...formatGate(report.gate));
  lines.push(...formatDeadLetters(report.dead_letters));
  if (report.sources) {
    lines.push(sourcesLine(report.sources));
    for (const poller of report.sources.pollers) {
      lines.push(`source:    ${formatPoller(poller)}`);
      if (poller.tool_check?.verdict === 'undeclared') lines.push(`warning:   ${poller.tool_check.message}`);
    }
    for (const warning of report.sources.warnings) lines.push(`warning:   ${warning}`);
  }
  for (const warning of report.warnings) lines.push(`warning:   ${warning}`);
  return lines.map(terminalText).join('\n');
};

/** How many of the latest acks `pulse status` lists. */
const ACKS_SHOWN = 5;

/** The latest acks, newest first, a line each: who acknowledged which change when, and what became of the plan. */
const formatAcks = (acks: readonly ReplanAck[], now: number): string[] =>
  acks
    .slice(-ACKS_SHOWN)
    .reverse()
    .map(
      (ack) =>
        `acked:     ${agentLabel(ack)} acknowledged ${ack.event_id} ${ago(ack.at, now)}: ${ack.summary}`,
    );

/** How long before `now` the time `iso` was, in whole seconds or minutes: `4s ago`, `12m ago`. */
const ago = (iso: string, now: number) => {
  const seconds = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  return seconds < 60 ? `${seconds}s ago` : `${Math.floor(seconds / 60)}m ago`;
};

/**
 * One line per open MCP session, named as acks and `owes ack:` name it; none at all without a
 * daemon (`agents` undefined), since the files know of none.
 */
const formatAgents = (agents: readonly AgentStatus[] | undefined, now: number): string[] => {
  if (agents === undefined) return [];
  if (agents.length === 0) return ['agents:    none connected over MCP'];
  return agents.map((a) => {
    const client = a.client_name ? { name: a.client_name, version: a.client_version ?? '' } : null;
    const label = agentLabel({ parties: [sessionParty(a.session)], client });
    return (
      `agent:     ${label}${a.agent ? `, named ${a.agent}` : ''}, last check-in ${ago(a.last_request_at, now)}` +
      (a.holds_delivery ? `, holds delivery ${a.holds_delivery}` : '')
    );
  });
};

/** One line for sources.json: its error (and what runs meanwhile), or that none is configured. */
const sourcesLine = ({
  untrusted,
  error,
  pollers,
  keeps_last_good,
}: NonNullable<StatusReport['sources']>): string => {
  // Optional: a daemon older than trust does not send it.
  if (untrusted) return `sources:   NOT TRUSTED ${untrusted.notice}`;
  if (error) return `sources:   ERROR ${error} (${configErrorEffect(keeps_last_good ?? false)})`;
  return pollers.length === 0
    ? 'sources:   none configured (.pulse/sources.json)'
    : `sources:   ${pollers.length} running (.pulse/sources.json)`;
};

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** The gate: its state and settings, then the delivery set aside or out, if any. */
export const formatGate = (gate: GateStatus): string[] => {
  const s = gate.settings;
  const lines = [
    `gate:      ${gate.state}; ${gate.delivered} delivered, ${gate.consumed_silently} consumed silently, ${gate.put_back} put back` +
      ` (threshold ${s.threshold}, lease ${seconds(s.leaseMs)}, cooldown ${seconds(s.cooldownMs)}, max attempts ${s.maxAttempts})` +
      `${gate.last_error ? `; last error: ${gate.last_error}` : ''}`,
  ];
  lines.push(`thinker:   ${thinkerLine(gate.thinker)}`);
  const t = gate.last_thought;
  if (t !== null) {
    const quiet = t.events.filter((e) => e.verdict === 'quiet').length;
    lines.push(
      `thought:   ${t.at} by ${t.by}${t.note ? ` (${t.note})` : ''}: ${t.events.length - quiet} to deliver, ${quiet} consumed silently${t.unjudged ? `, ${t.unjudged} unjudged (back to the inbox)` : ''}`,
      ...t.events
        .filter((e) => e.why !== undefined)
        .map((e) => `           "${e.title}": ${e.urgency} (${e.why})`),
    );
  }
  const d = gate.delivery;
  if (d !== null) {
    const titles = d.events.map((e) => `"${e.title}"${e.why === undefined ? '' : ` (${e.why})`}`).join(', ');
    lines.push(
      d.holder === null
        ? `delivery:  ${d.delivery_id} waits for an agent to check in: ${titles}`
        : `delivery:  ${d.delivery_id} out to ${d.holder_label ?? d.holder} until ${d.lease_expires_at}: ${titles}`,
    );
  }
  return lines;
};

/** Dead letters, most recent first, with where the full events are. */
export const formatDeadLetters = (dead: readonly DeadLetterStatus[]): string[] =>
  dead.length === 0
    ? ['dead:      none']
    : [
        `dead:      ${dead.length} event${dead.length === 1 ? '' : 's'} never dealt with (all of them in .pulse/dead-letters.jsonl):`,
        ...[...dead]
          .reverse()
          .slice(0, 10)
          .map(
            (d) =>
              `  ${d.at} ${d.source}: "${d.title}" (${d.reason === 'overflow' ? 'pushed out of a full inbox' : `${d.attempts} failed attempts`})`,
          ),
      ];

/** One poller on one line; one whose tool was refused says why and how to fix it. */
export const formatPoller = (p: PollerStatus): string =>
  p.tool_check?.verdict === 'refused'
    ? `${p.source} (${p.server}.${p.tool}, every ${p.interval_sec}s): REFUSED: ${p.tool_check.message}`
    : `${p.source} (${p.server}.${p.tool}, every ${p.interval_sec}s): ${p.state}, ${p.items_seen} items, ` +
      `last poll ${p.last_poll_at ?? 'never'}, next ${p.next_poll_at ?? '-'}${p.last_error ? `, last error: ${p.last_error}` : ''}`;
