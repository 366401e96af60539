import type { McpServer } from '@modelcontextprotocol/server';
import {
  type LoggingLevel,
  ProtocolError,
  ProtocolErrorCode,
  type ServerCapabilities,
} from '@modelcontextprotocol/server';
import type { Delivery } from '../../machines/delivery-rules.js';
import type { PulseActor } from '../../machines/pulse.js';
import { gateOf, inboxOf, logOf, replanOf } from '../system/ask-actors.js';
import { CONTEXT_URI, contextNow } from './context-resource.js';
import { EXTERNAL_FRAMING, headline } from './external-section.js';

/**
 * What a server advertises for the push. `logging` must be given at construction: the SDK
 * installs its `logging/setLevel` handler only then.
 */
export const PUSH_CAPABILITIES = {
  logging: {},
  resources: { subscribe: true },
} as const satisfies ServerCapabilities;

/** Where one session's push goes. */
export interface PushChannel {
  resourceUpdated(uri: string): void;
  log(level: LoggingLevel, data: string): void;
}

/** One session's watch on the actors behind the context. */
export interface ContextWatch {
  /** From now on, a change of what a read of the context returns sends a resource update. */
  subscribe(): void;
  unsubscribe(): void;
  /** Drops every actor subscription; nothing is sent afterwards. */
  stop(): void;
}

/** The warning for a replan that just became pending: which event, which files, what to do. */
export const replanMessage = (eventId: string, files: readonly string[]): string =>
  `The user changed ${files.join(', ')} (event ${eventId}): your plan is on hold. Read ${CONTEXT_URI}, update .pulse/plan.md, then call pulse_ack_replan with event_id "${eventId}" before continuing.`;

/** The notice for a delivery waiting for an agent: how many, each title on its own line. */
export const attentionMessage = ({ events }: Pick<Delivery, 'events'>): string =>
  [
    `${events.length} external event${events.length === 1 ? ' needs' : 's need'} the user's attention. ${EXTERNAL_FRAMING}`,
    ...events.map((event) => `- ${headline(event)}`),
    "Call pulse_should_interrupt to take them, tell the user, then call pulse_ack_events with the answer's delivery_id.",
  ].join('\n');

/**
 * Watches the actors for one session and pushes what changed: a resource update when the
 * rendered context differs from the last one the session was told about, a warning once per
 * pending replan event, a notice once per delivery offered to the agents. What was already so
 * when the watch began is not announced: the session's notification stream is not open yet.
 * Snapshots of one burst (a scan, the replan and gate it wakes) are checked once, on the next
 * turn of the event loop.
 */
export const watchContext = (actor: PulseActor, channel: PushChannel): ContextWatch => {
  let shown: string | null = null;
  let announcedReplan = replanOf(actor).getSnapshot().context.pendingEventId;
  let announcedDelivery = gateOf(actor).getSnapshot().context.delivery?.deliveryId ?? null;
  let pending: NodeJS.Immediate | null = null;

  const check = () => {
    pending = null;
    if (shown !== null) {
      const context = contextNow(actor);
      if (context !== shown) {
        shown = context;
        channel.resourceUpdated(CONTEXT_URI);
      }
    }
    const { pendingEventId, pendingFiles } = replanOf(actor).getSnapshot().context;
    if (pendingEventId !== null && pendingEventId !== announcedReplan) {
      announcedReplan = pendingEventId;
      channel.log('warning', replanMessage(pendingEventId, pendingFiles));
    }
    // A delivery claimed in the tick it was made went to the agent checking in, in its answer.
    const { delivery } = gateOf(actor).getSnapshot().context;
    if (delivery !== null && delivery.holder === null && delivery.deliveryId !== announcedDelivery) {
      announcedDelivery = delivery.deliveryId;
      channel.log('notice', attentionMessage(delivery));
    }
  };
  const schedule = () => {
    pending ??= setImmediate(check);
  };
  // The actors whose snapshots the context is rendered from.
  const subscriptions = [
    logOf(actor).subscribe(schedule),
    replanOf(actor).subscribe(schedule),
    gateOf(actor).subscribe(schedule),
    inboxOf(actor).subscribe(schedule),
  ];

  return {
    subscribe() {
      shown ??= contextNow(actor);
    },
    unsubscribe() {
      shown = null;
    },
    stop() {
      for (const subscription of subscriptions) subscription.unsubscribe();
      if (pending !== null) clearImmediate(pending);
      pending = null;
    },
  };
};

const requireContextUri = (uri: string) => {
  if (uri !== CONTEXT_URI) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Cannot subscribe to ${JSON.stringify(uri)}: the only resource with updates is ${CONTEXT_URI}.`,
    );
  }
};

/**
 * `resources/subscribe` and `resources/unsubscribe` for the context, and the push itself. A
 * session server watches the actors from `notifications/initialized` until its transport
 * closes (DELETE, expiry, eviction, shutdown), held in `watches` meanwhile; a one-shot server
 * has no session and watches nothing.
 */
export const registerContextPush = (
  server: McpServer,
  actor: PulseActor,
  watches: Set<ContextWatch> = new Set(),
): void => {
  const protocol = server.server;
  let watch: ContextWatch | null = null;

  const startWatching = (): ContextWatch | null => {
    const sessionId = protocol.transport?.sessionId;
    if (watch !== null || sessionId === undefined) return watch;
    // A notification that cannot be sent (the client's stream is gone) is lost, never thrown.
    watch = watchContext(actor, {
      resourceUpdated: (uri) => {
        protocol.sendResourceUpdated({ uri }).catch(() => undefined);
      },
      log: (level, data) => {
        protocol.sendLoggingMessage({ level, logger: 'pulse', data }, sessionId).catch(() => undefined);
      },
    });
    watches.add(watch);
    return watch;
  };

  protocol.oninitialized = () => {
    startWatching();
  };
  protocol.onclose = () => {
    if (watch === null) return;
    watch.stop();
    watches.delete(watch);
    watch = null;
  };
  protocol.setRequestHandler('resources/subscribe', ({ params }) => {
    requireContextUri(params.uri);
    const session = startWatching();
    if (session === null) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        'Subscriptions need a session: initialize with "Accept: application/json, text/event-stream", then send the Mcp-Session-Id you get back.',
      );
    }
    session.subscribe();
    return {};
  });
  protocol.setRequestHandler('resources/unsubscribe', ({ params }) => {
    requireContextUri(params.uri);
    watch?.unsubscribe();
    return {};
  });
};
