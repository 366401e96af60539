import { waitFor } from 'xstate';
import { type ClientInfo, ONE_SHOT, type PartyKey } from '../../machines/agent-identity.js';
import type { AckOutcome, Caller, Delivery } from '../../machines/delivery-rules.js';
import { reconcileAnsweredAsIs } from '../../machines/event-log-decisions.js';
import type { GateAckAnswer } from '../../machines/gate-context.js';
import { gateOpen, heldDelivery } from '../../machines/gate-decisions.js';
import { planSnapshot } from '../../machines/plan-diff.js';
import type { PulseActor } from '../../machines/pulse.js';
import type { PulseSystemActors } from '../../machines/pulse-system.js';
import { needsHearing, type TieWay } from '../../machines/replan-agents.js';
import type { AckAnswer } from '../../machines/replan-context.js';
import type { SourceTestReply } from '../../machines/sources-context.js';
import type { SteerRequest, SteerWritten } from '../../machines/steer-context.js';
import { DEFAULT_SERVER_TIMEOUT_SEC } from '../sources/config/config.js';
import { MAX_SOURCE_TEST_MS } from '../sources/source-test.js';
import { formatMicros, systemMicroClock } from '../store/event-id.js';
import { actorOf, PulseUnavailableError } from './actors.js';
import { ask, REQUEST_TIMEOUT_MS } from './ask.js';
import { filesStill } from './still-files.js';

/** The ref of each actor a request asks, by its system id. */
export type LogRef = PulseSystemActors['log'];
export type ReplanRef = PulseSystemActors['replan'];
export type GateRef = PulseSystemActors['gate'];
export type InboxRef = PulseSystemActors['inbox'];
export type HookSessionsRef = PulseSystemActors['hooks'];
export type SourcesRef = PulseSystemActors['sources'];
export type SteerRef = PulseSystemActors['steer'];

export const logOf = (actor: PulseActor): LogRef => actorOf(actor, 'log');
export const replanOf = (actor: PulseActor): ReplanRef => actorOf(actor, 'replan');
export const gateOf = (actor: PulseActor): GateRef => actorOf(actor, 'gate');
export const inboxOf = (actor: PulseActor): InboxRef => actorOf(actor, 'inbox');
export const hooksOf = (actor: PulseActor): HookSessionsRef => actorOf(actor, 'hooks');
export const sourcesOf = (actor: PulseActor): SourcesRef => actorOf(actor, 'sources');
export const steerOf = (actor: PulseActor): SteerRef => actorOf(actor, 'steer');

/** How long a check-in waits for the reflection it asked for before it answers with what is out. */
const CHECKIN_TIMEOUT_MS = 5_000;

/**
 * A reflection asked for now would run at once, drain an empty inbox and change nothing: the gate
 * is idle and open (`gateOpen`: no focus, no pending replan), none is held back, and the inbox is
 * loaded and holds no event (items still being stored wake the gate themselves once they are in).
 * Most check-ins find this, so they skip the round trip.
 */
const nothingToReflectOn = (gate: GateRef, inbox: InboxRef): boolean => {
  const g = gate.getSnapshot();
  const i = inbox.getSnapshot();
  return (
    g.matches('idle') &&
    !g.context.deferred &&
    gateOpen(g.context) &&
    i.matches('ready') &&
    i.context.events.length === 0
  );
};

/**
 * An agent checked in: asks the gate to reflect, waits (bounded) until it is no longer draining
 * or thinking, then claims the delivery set aside for this agent. A delivery is out to one
 * agent at a time: another agent's check-in gets none until it is acknowledged or expires, and
 * an agent that owes a replan ack gets none until it has replanned.
 */
export const checkIn = async (
  actor: PulseActor,
  caller: Caller,
  /** False while this agent owes its own replan ack: it takes no delivery until it has replanned. */
  mayClaim = true,
): Promise<Delivery | null> => {
  const gate = gateOf(actor);
  if (!nothingToReflectOn(gate, inboxOf(actor))) {
    gate.send({ type: 'gate.reflect', reason: 'checkin' });
    await waitFor(gate, (s) => !s.matches('reflecting') && !s.matches('thinking'), {
      timeout: CHECKIN_TIMEOUT_MS,
    }).catch(() => undefined);
  }
  if (!mayClaim) return null;
  const before = gate.getSnapshot();
  // Only an offered delivery changes on a claim; in any other state the answer is a read of the snapshot, as the gate would give it.
  if (!before.matches('offered')) return heldDelivery(before.context, caller.agent);
  const claim = await ask(gate, (asking) => ({ type: 'gate.claim', ...asking, ...caller, now: Date.now() }));
  return claim.delivery;
};

/**
 * Read-your-writes: asks the event log to reconcile with the files and waits until a scan
 * that started after this request has finished. A write that returned before this call is
 * then in the snapshot, whatever the watcher's timing.
 */
export const reconcile = async (actor: PulseActor): Promise<void> => {
  const log = logOf(actor);
  const current = log.getSnapshot();
  const ready = current.matches('loading')
    ? await waitFor(log, (s) => !s.matches('loading'), { timeout: REQUEST_TIMEOUT_MS })
    : current;
  if (ready.matches('failed'))
    throw new PulseUnavailableError(ready.context.lastError ?? 'The event log failed to load.');
  // What the idle scan would answer at once (still files, nothing pending), read off the snapshot
  // as it is now, without the event's trip through the actor: the same guards, the stat check last.
  const now = log.getSnapshot();
  if (
    now.matches({ ready: { scan: 'idle' } }) &&
    reconcileAnsweredAsIs(now.context, () => filesStill(actor, now.context.files))
  )
    return;
  log.send({ type: 'log.reconcile' });
  const { scansRequested: ticket, scansCompleted } = log.getSnapshot().context;
  // Still files answer at once (the log's filesUnchanged guard); otherwise wait for the scan.
  if (scansCompleted >= ticket) return;
  await waitFor(log, (s) => s.context.scansCompleted >= ticket, { timeout: REQUEST_TIMEOUT_MS });
};

/**
 * Tells the replan lifecycle it heard from this party: a new one becomes an agent that owes what
 * a newcomer owes; a known one is marked heard at most once a minute, so calls cost no event.
 */
export const hearAgent = (actor: PulseActor, party: PartyKey, closes = false, client?: ClientInfo): void => {
  const replan = replanOf(actor);
  const now = Date.now();
  if (needsHearing(replan.getSnapshot().context.agents, party, now))
    replan.send({ type: 'agent.heard', party, at: now, closes, ...(client === undefined ? {} : { client }) });
};

/** Tells the replan lifecycle that two parties are one agent, and how it knows. */
export const tieAgents = (actor: PulseActor, a: PartyKey, b: PartyKey, by: TieWay): void => {
  replanOf(actor).send({ type: 'agent.tied', parties: [a, b], by });
};

/**
 * Asks the replan lifecycle to accept an ack. An accepted one is answered by the event log once
 * its write ended: durable, or (state.json could not be written) accepted in memory, written
 * again until it lands, and said so, never asked again.
 */
export const ackReplan = async (
  actor: PulseActor,
  eventId: string,
  agent: PartyKey = ONE_SHOT,
): Promise<AckAnswer> => {
  await reconcile(actor);
  const { index, files } = logOf(actor).getSnapshot().context;
  const target = index.get(eventId);
  return ask(replanOf(actor), (asking) => ({
    type: 'replan.ack',
    ...asking,
    eventId,
    target: target ? { id: target.id, path: target.path } : null,
    planSha256: files['plan.md'].sha256,
    plan: planSnapshot(files['plan.md']),
    at: formatMicros(systemMicroClock()).iso,
    agent,
  }));
};

/**
 * Acknowledges a delivery to the gate; an accepted ack is answered only once the inbox has its
 * settlement on disk (consumed events removed, dead letters written), so a restart cannot
 * deliver them again.
 */
export const ackEvents = (
  actor: PulseActor,
  deliveryId: string,
  outcomes: Record<string, AckOutcome> | undefined,
  caller: Caller,
): Promise<GateAckAnswer> =>
  ask(gateOf(actor), (asking) => ({
    type: 'gate.ack',
    ...asking,
    deliveryId,
    ...(outcomes === undefined ? {} : { outcomes }),
    ...caller,
    now: Date.now(),
  }));

/**
 * Asks the sources supervisor to test one source through the daemon's own clients and
 * environment, and waits for its reply: a result, or why no test ran. Bounded by twice the
 * server's timeout (connect, then call) plus 5 s, and by `MAX_SOURCE_TEST_MS`.
 */
export const askSourceTest = (actor: PulseActor, source: string, raw: boolean): Promise<SourceTestReply> => {
  const sources = sourcesOf(actor);
  const { context } = sources.getSnapshot();
  const server = context.sources.find((s) => s.name === source)?.server;
  const timeoutMs =
    context.servers.find((s) => s.name === server)?.timeoutMs ?? DEFAULT_SERVER_TIMEOUT_SEC * 1000;
  const waitMs = Math.min(2 * timeoutMs + 5_000, MAX_SOURCE_TEST_MS);
  return ask(sources, (asking) => ({ type: 'sources.test', ...asking, source, raw }), {
    timeoutMs: waitMs,
    timeoutMessage: `The test of source "${source}" did not end within ${waitMs / 1000} s.`,
  });
};

/** A write of guidance or constraints the steer actor refused: the message says why and the fix. */
export class SteerRefusedError extends Error {
  override name = 'SteerRefusedError';
}

/** A steer write done: what the file holds now, and the event pulse logged for exactly that text. */
export interface SteerDone {
  written: SteerWritten;
  /** The logged event whose hash is the text written; null when the file already said it, or another edit came first. */
  eventId: string | null;
}

/** How far back from the log's end the event of a write is looked for. */
const WRITE_EVENT_LOOK_BACK = 1000;

/**
 * Asks the steer actor to write guidance or constraints, waits for its reply, then reconciles
 * (read-your-writes) and finds the event the event log logged for exactly the text written: the
 * latest event of that file with that hash. Throws `SteerRefusedError` with the reason when the
 * write is refused.
 */
export const askSteer = async (actor: PulseActor, request: SteerRequest): Promise<SteerDone> => {
  const answer = await ask(steerOf(actor), (asking) => ({ type: 'steer.write', ...asking, ...request }));
  if ('refused' in answer) throw new SteerRefusedError(answer.refused);
  const { written } = answer;
  if (!written.changed) return { written, eventId: null };
  await reconcile(actor);
  const event = logOf(actor)
    .getSnapshot()
    .context.index.recentWhere((path) => path === written.path, WRITE_EVENT_LOOK_BACK, WRITE_EVENT_LOOK_BACK)
    .find((e) => e.sha256 === written.sha256);
  return { written, eventId: event?.id ?? null };
};
