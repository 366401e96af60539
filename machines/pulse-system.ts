import type { ActorRefFrom, ActorSystem } from 'xstate';
import type { eventLogMachine } from './event-log.js';
import type { fleetMachine } from './fleet.js';
import type { focusMachine } from './focus.js';
import type { gateMachine } from './gate.js';
import type { hookSessionsMachine } from './hook-sessions.js';
import type { inboxMachine } from './inbox.js';
import type { notifierMachine } from './notifier.js';
import type { pollerMachine } from './poller.js';
import type { replanMachine } from './replan.js';
import type { sourcesMachine } from './sources.js';
import type { steerMachine } from './steer.js';
import type { watcherMachine } from './watcher.js';

/** The system's map: each system id the root starts (and each `poller:<source>`) to its actor's ref. */
export type PulseSystemActors = {
  replan: ActorRefFrom<typeof replanMachine>;
  log: ActorRefFrom<typeof eventLogMachine>;
  inbox: ActorRefFrom<typeof inboxMachine>;
  gate: ActorRefFrom<typeof gateMachine>;
  focus: ActorRefFrom<typeof focusMachine>;
  sources: ActorRefFrom<typeof sourcesMachine>;
  watcher: ActorRefFrom<typeof watcherMachine>;
  hooks: ActorRefFrom<typeof hookSessionsMachine>;
  steer: ActorRefFrom<typeof steerMachine>;
  notify: ActorRefFrom<typeof notifierMachine>;
  /** Only with `pulse start --fleet`. */
  fleet: ActorRefFrom<typeof fleetMachine>;
  [poller: `poller:${string}`]: ActorRefFrom<typeof pollerMachine>;
};

/** One project's actor system, typed by its map: `get('gate')` is the gate's ref. */
export type PulseSystem = ActorSystem<{ actors: PulseSystemActors }>;

/** A system id of the map. */
export type PulseSystemId = keyof PulseSystemActors;
