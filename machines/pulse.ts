import { type Actor, setup, spawnChild } from 'xstate';
import { eventLogMachine } from './event-log.js';
import { fleetMachine } from './fleet.js';
import type { FleetContext } from './fleet-context.js';
import { focusMachine } from './focus.js';
import { gateMachine } from './gate.js';
import { hookSessionsMachine } from './hook-sessions.js';
import { inboxMachine } from './inbox.js';
import { notifierMachine } from './notifier.js';
import { replanMachine } from './replan.js';
import { sourcesMachine } from './sources.js';
import { steerMachine } from './steer.js';
import { watcherMachine } from './watcher.js';

/**
 * The root of the actor system: starts each actor under a stable system id, so the others
 * (and the MCP layer) can address it with `system.get(id)`.
 */
export const pulseMachine = setup({
  types: { events: {} as { type: 'fleet.join'; fleet: FleetContext } },
  actors: {
    fleet: fleetMachine,
    replan: replanMachine,
    eventLog: eventLogMachine,
    watcher: watcherMachine,
    inbox: inboxMachine,
    gate: gateMachine,
    focus: focusMachine,
    sources: sourcesMachine,
    hookSessions: hookSessionsMachine,
    steer: steerMachine,
    notifier: notifierMachine,
  },
}).createMachine({
  id: 'pulse',
  description:
    'The pulse sidecar: replan lifecycle, event log, .pulse/ watcher, inbox, reflection gate, focus (quiet until a time the user chose), the sources supervisor with one poller per source, what the agent hooks told each session, the writer of what the user steers with, and desktop notifications.',
  // replan starts before log, inbox before gate, gate before focus, and all before sources, so each is there to receive the other's first messages.
  invoke: [
    { src: 'replan', id: 'replan', systemId: 'replan' },
    { src: 'eventLog', id: 'log', systemId: 'log' },
    { src: 'inbox', id: 'inbox', systemId: 'inbox', input: {} },
    { src: 'gate', id: 'gate', systemId: 'gate', input: {} },
    { src: 'focus', id: 'focus', systemId: 'focus' },
    { src: 'sources', id: 'sources', systemId: 'sources' },
    { src: 'watcher', id: 'watcher', systemId: 'watcher' },
    { src: 'hookSessions', id: 'hooks', systemId: 'hooks', input: {} },
    { src: 'steer', id: 'steer', systemId: 'steer' },
    { src: 'notifier', id: 'notify', systemId: 'notify' },
  ],
  on: {
    // Only with `pulse start --fleet`: the project's place in the fleet, as its member reports it.
    'fleet.join': {
      actions: spawnChild('fleet', { id: 'fleet', systemId: 'fleet', input: ({ event }) => event.fleet }),
    },
  },
});

/** The root actor of one project's system: what the daemon starts, and the MCP, HTTP and CLI layers read. */
export type PulseActor = Actor<typeof pulseMachine>;
