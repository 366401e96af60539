import { setup } from 'xstate';
import { eventLogMachine } from './event-log.js';
import { replanMachine } from './replan.js';
import { watcherMachine } from './watcher.js';

/**
 * The root of the actor system: starts each actor under a stable system id, so the others
 * (and the MCP layer) can address it with `system.get(id)`.
 */
export const pulseMachine = setup({
  actors: {
    replan: replanMachine,
    eventLog: eventLogMachine,
    watcher: watcherMachine,
  },
}).createMachine({
  id: 'pulse',
  description: 'The pulse sidecar: replan lifecycle, event log owner and .pulse/ watcher.',
  // replan starts first so it is there to receive the log owner's restored state.
  invoke: [
    { src: 'replan', id: 'replan', systemId: 'replan' },
    { src: 'eventLog', id: 'log', systemId: 'log' },
    { src: 'watcher', id: 'watcher', systemId: 'watcher' },
  ],
});
