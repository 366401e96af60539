import { createWebSocketInspector } from '@statelyai/inspect';
import type { AnyActor, InspectionEvent } from 'xstate';
import { startInspectorRelay } from './relay.js';
import { createSanitizer, type Sanitizer } from './sanitize.js';

/** What the daemon gives `createActor`, and how it stops. */
export interface PulseInspector {
  inspect(event: InspectionEvent): void;
  stop(): void;
}

/** An actor as the inspector reads it: named by its system id, its snapshot sanitized when read. */
const viewOf = (actorRef: AnyActor, sanitizer: Sanitizer) => ({
  id: actorRef.systemId ?? actorRef.id,
  sessionId: actorRef.sessionId,
  _parent: actorRef._parent,
  logic: actorRef.logic,
  getSnapshot: () => sanitizer.sanitizeSnapshot(actorRef.getSnapshot()),
});

/**
 * Streams the actor system to the relay at `url` through `createWebSocketInspector`. Snapshots
 * are sanitized here, before the library serialises them whole (its `sanitizeContext` runs
 * after that, and sees neither a promise actor's input and output nor the event log's index);
 * events go through its `sanitizeEvent`. Microsteps and actions are not sent.
 */
export const createPulseInspector = ({
  url,
  secrets,
}: {
  url: string;
  secrets?: () => readonly string[];
}): PulseInspector => {
  const sanitizer = createSanitizer(secrets ? { secrets } : {});
  const inspector = createWebSocketInspector({
    url,
    autoStart: true,
    // Everything from start until the socket opens: the first registrations must not be dropped.
    maxDeferredEvents: 2000,
    sanitizeContext: sanitizer.sanitizeContext,
    sanitizeEvent: sanitizer.sanitizeEvent,
  });
  const forward = (event: InspectionEvent) => inspector.inspect.next?.(event);
  return {
    inspect(event) {
      switch (event.type) {
        case '@xstate.actor':
          forward({ ...event, actorRef: viewOf(event.actorRef as AnyActor, sanitizer) as never });
          break;
        case '@xstate.snapshot':
          forward({ ...event, snapshot: sanitizer.sanitizeSnapshot(event.snapshot) as never });
          break;
        case '@xstate.event':
          forward(event);
          break;
      }
    },
    stop: () => inspector.stop(),
  };
};

/** The relay and the inspector feeding it, as the daemon runs them with `--inspect`. */
export interface Inspecting {
  /** The relay's page. */
  url: string;
  inspect(event: InspectionEvent): void;
  close(): Promise<void>;
}

/** Starts the relay on `port` (127.0.0.1 only), then the inspector that streams to it. */
export const startInspecting = async ({
  port,
  secrets,
}: {
  port: number;
  secrets: () => readonly string[];
}): Promise<Inspecting> => {
  const relay = await startInspectorRelay({ port });
  const inspector = createPulseInspector({ url: relay.wsUrl, secrets });
  // Stopped while still connecting, @statelyai/inspect's socket fails and reconnects every 5 s
  // for good, holding the process open: so it is open before anyone can stop it.
  await relay.firstClient;
  return {
    url: relay.url,
    inspect: inspector.inspect,
    async close() {
      inspector.stop();
      await relay.close();
    },
  };
};
