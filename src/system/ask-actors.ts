import { waitFor } from 'xstate';
import { type ClientInfo, ONE_SHOT, type PartyKey } from '../../machines/agent-identity.js';
import type { AckOutcome, Caller, Delivery } from '../../machines/delivery-rules.js';
import type { GateAckReply } from '../../machines/gate-context.js';
import { claimAnswered, gateOpen } from '../../machines/gate-decisions.js';
import { planSnapshot } from '../../machines/plan-diff.js';
import type { PulseActor } from '../../machines/pulse.js';
import type { PulseSystemActors } from '../../machines/pulse-system.js';
import { needsHearing, type TieWay } from '../../machines/replan-agents.js';
import type { AckReply } from '../../machines/replan-context.js';
import type { SourceTestReply } from '../../machines/sources-context.js';
import type { SteerRequest, SteerWritten } from '../../machines/steer-context.js';
import { DEFAULT_SERVER_TIMEOUT_SEC } from '../sources/config/config.js';
import { MAX_SOURCE_TEST_MS } from '../sources/source-test.js';
import { formatMicros, systemMicroClock } from '../store/event-id.js';
import { actorOf, PulseUnavailableError } from './actors.js';

/** How long a request waits on an actor before it reports the daemon as stuck. */
const REQUEST_TIMEOUT_MS = 10_000;

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

let nextRequestId = 1;

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
  const requestId = nextRequestId++;
  const claim = { type: 'gate.claim', requestId, ...caller, now: Date.now() } as const;
  const before = gate.getSnapshot();
  // Only an offered delivery changes on a claim; in any other state the answer is a read of the snapshot, as the gate would give it.
  if (!before.matches('offered')) return claimAnswered(before.context, claim).lastClaim?.delivery ?? null;
  gate.send(claim);
  // The gate answers synchronously: the reply is in this snapshot.
  const reply = gate.getSnapshot().context.lastClaim;
  return reply?.requestId === requestId ? reply.delivery : null;
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

/** An ack's answer: the replan lifecycle's reply and, once accepted, whether state.json holds it yet. */
export type AckAnswer = AckReply & {
  /** True once the accepted ack is in state.json; false while it lives in memory only (a full disk). */
  durable?: boolean;
  /** Why it is not durable yet, and what pulse does about it. */
  warning?: string;
};

/**
 * Asks the replan lifecycle to accept an ack. An accepted one is answered once its write ended:
 * durable, or (state.json could not be written) accepted in memory, written again until it lands,
 * and said so, never asked again.
 */
export const ackReplan = async (
  actor: PulseActor,
  eventId: string,
  agent: PartyKey = ONE_SHOT,
): Promise<AckAnswer> => {
  await reconcile(actor);
  const log = logOf(actor);
  const replan = replanOf(actor);
  const { index, files } = log.getSnapshot().context;
  const target = index.get(eventId);
  const requestId = nextRequestId++;
  replan.send({
    type: 'replan.ack',
    requestId,
    eventId,
    target: target ? { id: target.id, path: target.path } : null,
    planSha256: files['plan.md'].sha256,
    plan: planSnapshot(files['plan.md']),
    at: formatMicros(systemMicroClock()).iso,
    agent,
  });
  const { context } = await waitFor(replan, (s) => s.context.lastReply?.requestId === requestId, {
    timeout: REQUEST_TIMEOUT_MS,
  });
  const reply = context.lastReply!;
  if (!reply.accepted) return reply;
  const saved = await waitFor(
    log,
    (s) => s.context.ackSavedRequestId >= requestId || s.context.ackError?.requestId === requestId,
    { timeout: REQUEST_TIMEOUT_MS },
  );
  if (saved.context.ackSavedRequestId >= requestId) return { ...reply, durable: true };
  return {
    ...reply,
    durable: false,
    warning: `Accepted, but not yet written to .pulse/state.json (${saved.context.ackError?.message}): pulse keeps the ack in memory and writes it as soon as it can; do not ack again. Until then a restart of pulse would ask for this replan once more.`,
  };
};

/**
 * Acknowledges a delivery to the gate; an accepted ack is answered only once the inbox has its
 * settlement on disk (consumed events removed, dead letters written), so a restart cannot
 * deliver them again.
 */
export const ackEvents = async (
  actor: PulseActor,
  deliveryId: string,
  outcomes: Record<string, AckOutcome> | undefined,
  caller: Caller,
): Promise<GateAckReply> => {
  const gate = gateOf(actor);
  const requestId = nextRequestId++;
  gate.send({
    type: 'gate.ack',
    requestId,
    deliveryId,
    ...(outcomes === undefined ? {} : { outcomes }),
    ...caller,
    now: Date.now(),
  });
  // The gate answers synchronously, and the inbox has taken its settlement by now.
  const reply = gate.getSnapshot().context.lastReply;
  if (reply?.requestId !== requestId) throw new PulseUnavailableError('The reflection gate did not answer.');
  if (!reply.accepted || reply.settleSeq === null) return reply;
  const seq = reply.settleSeq;
  const saved = await waitFor(
    inboxOf(actor),
    (s) => s.context.settleSaved >= seq || s.context.settleError?.seq === seq,
    { timeout: REQUEST_TIMEOUT_MS },
  );
  if (saved.context.settleSaved < seq) {
    throw new PulseUnavailableError(
      `The ack was accepted but could not be written to inbox.jsonl: ${saved.context.settleError?.message}. Check that .pulse/ is writable.`,
    );
  }
  return reply;
};

/**
 * Asks the sources supervisor to test one source through the daemon's own clients and
 * environment, and waits for its reply: a result, or why no test ran. Bounded by twice the
 * server's timeout (connect, then call) plus 5 s, and by `MAX_SOURCE_TEST_MS`.
 */
export const askSourceTest = async (
  actor: PulseActor,
  source: string,
  raw: boolean,
): Promise<SourceTestReply> => {
  const sources = sourcesOf(actor);
  const { context } = sources.getSnapshot();
  const server = context.sources.find((s) => s.name === source)?.server;
  const timeoutMs =
    context.servers.find((s) => s.name === server)?.timeoutMs ?? DEFAULT_SERVER_TIMEOUT_SEC * 1000;
  const waitMs = Math.min(2 * timeoutMs + 5_000, MAX_SOURCE_TEST_MS);
  const requestId = nextRequestId++;
  sources.send({ type: 'sources.test', requestId, source, raw });
  const answered = await waitFor(sources, (s) => s.context.tests.some((t) => t.requestId === requestId), {
    timeout: waitMs,
  }).catch(() => null);
  const reply = answered?.context.tests.find((t) => t.requestId === requestId);
  if (reply === undefined)
    throw new PulseUnavailableError(`The test of source "${source}" did not end within ${waitMs / 1000} s.`);
  return reply;
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
export const askSteer = async (
  actor: PulseActor,
  request: Omit<SteerRequest, 'requestId'>,
): Promise<SteerDone> => {
  const steer = steerOf(actor);
  const requestId = nextRequestId++;
  steer.send({ type: 'steer.write', requestId, ...request });
  const answered = await waitFor(steer, (s) => s.context.replies.some((r) => r.requestId === requestId), {
    timeout: REQUEST_TIMEOUT_MS,
  });
  const reply = answered.context.replies.find((r) => r.requestId === requestId)!;
  if ('error' in reply) throw new SteerRefusedError(reply.error);
  const { written } = reply;
  if (!written.changed) return { written, eventId: null };
  await reconcile(actor);
  const event = logOf(actor)
    .getSnapshot()
    .context.index.recentWhere((path) => path === written.path, WRITE_EVENT_LOOK_BACK, WRITE_EVENT_LOOK_BACK)
    .find((e) => e.sha256 === written.sha256);
  return { written, eventId: event?.id ?? null };
};
