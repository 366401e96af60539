import type { Logger } from 'pino';
import type { SnapshotFrom } from 'xstate';
import type { eventLogMachine } from '../../machines/event-log.js';
import type { InboxEvent } from '../../machines/external.js';
import type { focusMachine } from '../../machines/focus.js';
import type { gateMachine } from '../../machines/gate.js';
import type { ThoughtRecord } from '../../machines/gate-context.js';
import type { inboxMachine } from '../../machines/inbox.js';
import { faultList, type LogFaults } from '../../machines/log-faults.js';
import type { notifierMachine } from '../../machines/notifier.js';
import type { pollerMachine } from '../../machines/poller.js';
import type { replanMachine } from '../../machines/replan.js';
import { clientOf } from '../../machines/replan-agents.js';
import type { sourcesMachine } from '../../machines/sources.js';
import { sourceBlocked } from '../../machines/sources-decisions.js';
import type { steerMachine } from '../../machines/steer.js';
import type { watcherMachine } from '../../machines/watcher.js';
import { POLL_INTERVAL_MS } from '../effects/poll-folder.js';
import { agentLabel } from './agent-label.js';
import { configErrorEffect, watchFailedNotice } from './sentences.js';
import { untrustedOf } from './untrusted-notice.js';

// What the activity log says about each actor: a function of the snapshot before and after one
// change, which logs only when something a user cares about changed. `previous` is undefined for
// the snapshot the actor had when the log began. Each rule is O(1) per change (O(new items) at most).

/** One actor's rule: given its snapshot before and after a change, logs what changed. */
export type Rule<S> = (previous: S | undefined, next: S, log: Logger) => void;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** An external event as the log shows it: never its detail. */
const summary = (event: InboxEvent) => ({ id: event.id, source: event.source, title: event.title });

type AgentBook = SnapshotFrom<typeof replanMachine>['context']['agents'];

/** Each agent pulse hears from for the first time, named, with the MCP revision its client speaks. */
const logNewAgents = (was: AgentBook, now: AgentBook, log: Logger): void => {
  for (const [id, agent] of Object.entries(now)) {
    if (was[id] !== undefined) continue;
    const client = clientOf(agent);
    const label = agentLabel({ parties: Object.keys(agent.parties), client });
    const protocol = client?.protocol ?? null;
    log.info(
      { agent: label, protocol },
      protocol === null ? `agent working: ${label}` : `agent working: ${label}, speaking MCP ${protocol}`,
    );
  }
};

export const replanRule: Rule<SnapshotFrom<typeof replanMachine>> = (previous, next, log) => {
  if (previous === undefined) return;
  const was = previous.context;
  const now = next.context;
  const restored = previous.matches('loading');
  if (now.pendingEventId !== null && now.pendingEventId !== was.pendingEventId) {
    log.info(
      { event_id: now.pendingEventId, files: now.pendingFiles, ...(restored ? { restored: true } : {}) },
      `replan pending: the agent must re-read ${now.pendingFiles.join(', ') || 'the guidance'} and acknowledge`,
    );
  }
  if (!restored && now.agents !== was.agents) logNewAgents(was.agents, now.agents, log);
  if (restored || now.acks === was.acks) return;
  // Each accepted ack once, with what became of the plan (one agent's ack is news even when another acknowledged the same event).
  const seen = new Set(was.acks);
  for (const ack of now.acks) {
    if (seen.has(ack)) continue;
    log.info(
      {
        event_id: ack.event_id,
        agent: agentLabel(ack),
        plan_sha256: ack.plan_after_sha256,
        plan_changed: ack.plan_changed,
        ...(ack.plan_changed ? { added: ack.added, removed: ack.removed } : {}),
      },
      ack.plan_changed ? `replan acknowledged: ${ack.summary}` : `replan ${ack.summary}`,
    );
  }
};

/** Says each fault once as it appears (what pulse cannot see or record), and once as it clears. */
const faultChanges = (was: LogFaults, now: LogFaults, log: Logger) => {
  if (was === now) return;
  const before = faultList(was);
  const after = faultList(now);
  for (const fault of after) {
    if (before.some((f) => f.file === fault.file && f.reason === fault.reason)) continue;
    log.error({ file: fault.file }, `pulse cannot see or record ${fault.file}: it ${fault.reason}`);
  }
  for (const fault of before) {
    if (after.some((f) => f.file === fault.file)) continue;
    log.info({ file: fault.file }, `${fault.file} can be read and written again`);
  }
};

export const eventLogRule: Rule<SnapshotFrom<typeof eventLogMachine>> = (previous, next, log) => {
  const now = next.context;
  if (previous !== undefined && now.lastError !== null && now.lastError !== previous.context.lastError) {
    log.error(now.lastError);
  }
  if (previous !== undefined) faultChanges(previous.context.faults, now.faults, log);
  // The journal as loaded is the baseline; events appended after it are news.
  if (previous === undefined || previous.matches('loading')) return;
  const added = now.index.size - previous.context.index.size;
  if (added <= 0 || !log.isLevelEnabled('debug')) return;
  for (const event of now.index.recent(added)) {
    log.debug({ event_id: event.id, file: event.path, kind: event.kind }, 'file event logged');
  }
};

/** Each thought: who judged, and each event's verdict with the thinker's reason (consumed silently ones too). */
const thoughtChanges = (was: ThoughtRecord | null, now: ThoughtRecord | null, log: Logger) => {
  if (now === null || now === was) return;
  if (now.note !== null && now.note !== was?.note) log.warn({ thinker: now.by }, now.note);
  const quiet = now.judged.filter((e) => e.verdict === 'quiet').length;
  // The rule thinker's verdicts follow from sources.json; a model's, with its reasons, are news.
  const level = now.judged.some((e) => e.why !== undefined) ? 'info' : 'debug';
  log[level](
    { thinker: now.by, events: now.judged, ...(now.unjudged > 0 ? { unjudged: now.unjudged } : {}) },
    `events judged: ${now.judged.length - quiet} to deliver, ${quiet} consumed silently`,
  );
};

export const gateRule: Rule<SnapshotFrom<typeof gateMachine>> = (previous, next, log) => {
  const was = previous?.context;
  const now = next.context;
  const delivery = now.delivery;
  if (delivery !== null && delivery.holder !== null) {
    const before = was?.delivery;
    if (before?.deliveryId !== delivery.deliveryId || before.holder === null) {
      log.info(
        {
          delivery_id: delivery.deliveryId,
          agent: agentLabel({ parties: [delivery.holder] }),
          lease_expires_at: iso(delivery.leaseExpiresAt),
          events: delivery.events.map(summary),
        },
        'delivery out to an agent',
      );
    }
  } else if (delivery !== null && was?.delivery?.deliveryId !== delivery.deliveryId) {
    log.debug({ delivery_id: delivery.deliveryId, events: delivery.events.length }, 'delivery offered');
  }
  const closed = now.closed.at(-1);
  if (closed !== undefined && closed !== was?.closed.at(-1)) {
    const { settled } = closed;
    if (closed.how === 'expired') {
      log.warn({ delivery_id: closed.deliveryId }, 'delivery lease expired: its events were put back');
    } else if (settled !== undefined) {
      log.info(
        {
          delivery_id: closed.deliveryId,
          consumed: settled.consumed,
          put_back: settled.putBack,
          dead_lettered: settled.deadLettered,
        },
        'delivery acknowledged',
      );
    }
  }
  if (was !== undefined && now.thinkFailures > was.thinkFailures) {
    log.warn({ error: now.lastError }, 'reflection failed: the events were put back');
  }
  thoughtChanges(was?.lastThought ?? null, now.lastThought, log);
  if (now.focusUntil !== (was?.focusUntil ?? null)) {
    if (now.focusUntil === null) log.info('focus off: external events flow again');
    else log.info({ until: iso(now.focusUntil) }, 'focus on: external events are held');
  }
};

export const inboxRule: Rule<SnapshotFrom<typeof inboxMachine>> = (previous, next, log) => {
  if (previous === undefined) return;
  const now = next.context;
  const inserted = now.inserted - previous.context.inserted;
  if (inserted > 0) log.debug({ count: inserted }, 'new external events in the inbox');
  const dead = Math.min(now.deadLettered - previous.context.deadLettered, now.deadLetters.length);
  for (const letter of dead > 0 ? now.deadLetters.slice(-dead) : []) {
    log.warn(
      { ...summary(letter.event), attempts: letter.event.attempts, reason: letter.reason },
      'external event dead-lettered',
    );
  }
};

/** Sources that run (enabled, their server not disabled) and their distinct servers: "2 sources from 1 server". */
export const sourceCounts = (context: SnapshotFrom<typeof sourcesMachine>['context']) => {
  const enabled = context.sources.filter(
    (source) => source.enabled && sourceBlocked(source, context.servers) === null,
  );
  return { sources: enabled.length, servers: new Set(enabled.map((source) => source.server)).size };
};

export const sourcesRule: Rule<SnapshotFrom<typeof sourcesMachine>> = (previous, next, log) => {
  const was = previous?.context;
  const now = next.context;
  if (now.loads === (was?.loads ?? 0)) return;
  if (now.error !== null) {
    log.warn({ error: now.error }, `sources.json rejected: ${configErrorEffect(now.goodConfigLoaded)}`);
    return;
  }
  const untrusted = untrustedOf(now);
  if (untrusted !== null) {
    // An edit (a git pull) of a file trusted before, or its trust revoked: what ran from it has just been stopped.
    const stopped =
      was?.trust.status === 'trusted' ? 'sources.json is no longer trusted: its servers are stopped. ' : '';
    log.warn({ hash: untrusted.hash }, `${stopped}${untrusted.notice}`);
    return;
  }
  const counts = sourceCounts(now);
  // A project without sources.json hears nothing about it at start.
  if (now.loads === 1 && now.sources.length === 0) log.debug(counts, 'sources.json loaded');
  else log.info(counts, 'sources.json loaded');
  for (const warning of now.warnings) if (!was?.warnings.includes(warning)) log.warn(warning);
};

export const pollerRule: Rule<SnapshotFrom<typeof pollerMachine>> = (previous, next, log) => {
  const was = previous?.context.failures ?? 0;
  const now = next.context;
  // What the tool says of its side effects, once per verdict: a refusal or a tool that declares nothing is worth a warning.
  const tool = now.tool;
  if (tool !== null && tool.message !== null && tool.verdict !== previous?.context.tool?.verdict) {
    const fields = { source: now.source.name, annotations: tool.hints };
    if (tool.verdict === 'allowed') log.info(fields, tool.message);
    else log.warn(fields, tool.message);
  }
  if (was === 0 && now.failures > 0) {
    log.warn(
      { source: now.source.name, error: now.lastError, retry_at: iso(now.nextPollAt) },
      'source failing',
    );
  } else if (was > 0 && now.failures === 0) {
    log.info({ source: now.source.name, failed_polls: was }, 'source recovered');
  }
};

export const focusRule: Rule<SnapshotFrom<typeof focusMachine>> = (previous, next, log) => {
  const error = next.context.lastError;
  if (error !== null && error !== previous?.context.lastError) {
    log.warn({ error }, 'focus.json not applied: the last good focus is kept');
  }
};

export const watcherRule: Rule<SnapshotFrom<typeof watcherMachine>> = (previous, next, log) => {
  const was = previous?.context;
  const now = next.context;
  if (now.down !== null && (was?.down ?? null) === null) {
    log.warn({ error: now.down }, watchFailedNotice(POLL_INTERVAL_MS / 1000));
  } else if (now.down === null && was !== undefined && was.down !== null) {
    log.info({ failed_tries: was.failures }, 'the .pulse/ file watcher recovered');
  } else if (now.down !== null && was !== undefined && now.failures > was.failures) {
    log.debug({ error: now.down, failed_tries: now.failures }, 'the .pulse/ watch failed again');
  }
};

/**
 * Desktop notifications: a missing notifier is said once (then none is tried again), a failing
 * one once until one is shown again; each shown at debug.
 */
export const notifyRule: Rule<SnapshotFrom<typeof notifierMachine>> = (previous, next, log) => {
  const was = previous?.context;
  const now = next.context;
  if (now.missing !== null && was?.missing == null) log.warn(`${now.missing}: --notify shows nothing`);
  if (now.lastError !== null && (was?.lastError ?? null) === null)
    log.warn({ error: now.lastError }, 'a desktop notification could not be shown; pulse keeps trying');
  if (was !== undefined && now.shown > was.shown)
    log.debug({ shown: now.shown }, 'desktop notification shown');
};

/** Each write of guidance or constraints through pulse (CLI or page), and each one refused. */
export const steerRule: Rule<SnapshotFrom<typeof steerMachine>> = (previous, next, log) => {
  const reply = next.context.last;
  if (previous === undefined || reply === null || reply === previous.context.last) return;
  const from =
    reply.by === 'fleet'
      ? `the fleet (from ${reply.origin ?? 'a member'})`
      : reply.by === 'page'
        ? 'the status page'
        : 'the command line';
  if ('refused' in reply)
    log.warn({ file: reply.file, from }, `write of .pulse/${reply.file}.md refused: ${reply.refused}`);
  else if (reply.written.changed)
    log.info(
      {
        file: reply.written.path,
        mode: reply.mode,
        sha256: reply.written.sha256,
        size: reply.written.size,
        from,
      },
      `${reply.written.path} ${reply.mode === 'append' ? 'added to' : 'replaced'} from ${from}`,
    );
};
