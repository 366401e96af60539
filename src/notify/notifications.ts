import type { Logger } from 'pino';
import type { SnapshotFrom } from 'xstate';
import type { gateMachine } from '../../machines/gate.js';
import type { Notification } from '../../machines/notifier-context.js';
import type { PulseActor } from '../../machines/pulse.js';
import type { replanMachine } from '../../machines/replan.js';
import { clientOf } from '../../machines/replan-agents.js';
import { lookUp, systemOf } from '../system/actors.js';
import { agentLabel } from '../system/agent-label.js';
import { formatDuration } from '../text/duration.js';

type ReplanSnapshot = SnapshotFrom<typeof replanMachine>;
type GateSnapshot = SnapshotFrom<typeof gateMachine>;

/** What `pulse start --notify` was told, and how the project is named in what it says. */
export interface NotifySettings {
  /** An agent that owes an ack this long is news. */
  heldAfterMs: number;
  /** The project's folder name. */
  project: string;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
const fileNames = (files: readonly string[]) => files.map((f) => f.split('/').at(-1)).join(', ');

/** After an ack, when no agent owes anything any more: every agent replanned for that change. */
export const everyoneAcknowledged = (
  previous: ReplanSnapshot['context'],
  next: ReplanSnapshot['context'],
  { project }: NotifySettings,
): Notification | null => {
  const last = next.acks.at(-1);
  if (last === undefined || next.acks === previous.acks || next.pendingEventId !== null) return null;
  const acks = next.acks.filter((ack) => ack.event_id === last.event_id);
  const unchanged = acks.filter((ack) => !ack.plan_changed).length;
  return {
    key: `acked:${last.event_id}`,
    title: `pulse · ${project}: ${acks.length > 1 ? 'every agent replanned' : 'the agent replanned'}`,
    body: `${plural(acks.length, 'agent')} acknowledged the change to ${fileNames(last.files) || 'guidance'}${unchanged > 0 ? `; ${unchanged} without changing the plan` : ''}.`,
  };
};

/** Each agent that has owed an ack for `heldAfterMs` or more at `now`: once per agent and change. */
export const heldTooLong = (
  context: ReplanSnapshot['context'],
  now: number,
  { heldAfterMs, project }: NotifySettings,
): Notification[] =>
  Object.entries(context.agents).flatMap(([id, agent]) => {
    if (agent.owes === null || agent.owingSince === null || now - agent.owingSince < heldAfterMs) return [];
    return [
      {
        key: `held:${id}:${agent.owes.pendingEventId}`,
        title: `pulse · ${project}: an agent is still held`,
        body: `${agentLabel({ parties: Object.keys(agent.parties), client: clientOf(agent) })} has not acknowledged the change to ${fileNames(agent.owes.pendingFiles)} for ${formatDuration(Math.max(1000, Math.round((now - agent.owingSince) / 1000) * 1000))}: it is held until it replans.`,
      },
    ];
  });

/** A new delivery of external events: they need the user (the agent will tell them too). */
export const deliveryNeedsYou = (
  previous: GateSnapshot['context'] | undefined,
  next: GateSnapshot['context'],
  { project }: NotifySettings,
): Notification | null => {
  const delivery = next.delivery;
  if (delivery === null || previous?.delivery?.deliveryId === delivery.deliveryId) return null;
  const titles = delivery.events.map((event) => `${event.title} (${event.source})`);
  return {
    key: `delivery:${delivery.deliveryId}`,
    title: `pulse · ${project}: ${delivery.events[0]?.title ?? 'external events'}`,
    body: `${plural(delivery.events.length, 'external event')} need${delivery.events.length === 1 ? 's' : ''} you: ${titles.join('; ')}`,
  };
};

/**
 * `--notify`: watches the replan lifecycle and the gate (read-only, as the activity log does) and
 * a clock for agents held too long, and sends each notification to the `notify` actor, which shows
 * it. Returns the function that stops it.
 */
export const observeForNotifications = (
  actor: PulseActor,
  settings: NotifySettings,
  log: Logger,
): (() => void) => {
  const system = systemOf(actor);
  const notifier = lookUp(system, 'notify');
  const replan = lookUp(system, 'replan');
  const gate = lookUp(system, 'gate');
  if (notifier === undefined || replan === undefined) return () => undefined;
  const send = (notification: Notification | null) => {
    if (notification !== null) notifier.send({ type: 'notify.send', notification });
  };
  const guarded = (step: () => void) => {
    try {
      step();
    } catch (error) {
      log.error({ error: String(error) }, 'the desktop notifications failed on a change');
    }
  };
  let lastReplan = (replan.getSnapshot() as ReplanSnapshot).context;
  const replanSub = replan.subscribe((snapshot: ReplanSnapshot) =>
    guarded(() => {
      send(everyoneAcknowledged(lastReplan, snapshot.context, settings));
      lastReplan = snapshot.context;
    }),
  );
  let lastGate = (gate?.getSnapshot() as GateSnapshot | undefined)?.context;
  const gateSub = gate?.subscribe((snapshot: GateSnapshot) =>
    guarded(() => {
      send(deliveryNeedsYou(lastGate, snapshot.context, settings));
      lastGate = snapshot.context;
    }),
  );
  // Often enough to be at most half the limit late, at most every 30 s.
  const clock = setInterval(
    () => guarded(() => heldTooLong(lastReplan, Date.now(), settings).forEach(send)),
    Math.max(250, Math.min(settings.heldAfterMs / 2, 30_000)),
  );
  clock.unref();
  return () => {
    clearInterval(clock);
    replanSub.unsubscribe();
    gateSub?.unsubscribe();
  };
};
