import { setup } from 'xstate';
import { eventLogMachine } from './event-log.js';
import { type GateInput, gateMachine } from './gate.js';
import { inboxMachine } from './inbox.js';
import { replanMachine } from './replan.js';
import { sourcesMachine } from './sources.js';
import { watcherMachine } from './watcher.js';

/** What the composition root may set: the gate's knobs (lease, cooldown, threshold, attempts). */
export interface PulseInput {
  gate?: GateInput;
}

/**
 * The root of the actor system: starts each actor under a stable system id, so the others
 * (and the MCP layer) can address it with `system.get(id)`.
 */
export const pulseMachine = setup({
  types: {
    context: {} as { gate: GateInput },
    input: {} as PulseInput | undefined,
  },
  actors: {
    replan: replanMachine,
    eventLog: eventLogMachine,
    watcher: watcherMachine,
    inbox: inboxMachine,
    gate: gateMachine,
    sources: sourcesMachine,
  },
}).createMachine({
  id: 'pulse',
  description:
    'The pulse sidecar: replan lifecycle, event log owner, .pulse/ watcher, inbox, reflection gate, and the sources supervisor with one poller per source.',
  context: ({ input }) => ({ gate: input?.gate ?? {} }),
  // replan starts before log, inbox before gate, and both before sources, so each is there to receive the other's first messages.
  invoke: [
    { src: 'replan', id: 'replan', systemId: 'replan' },
    { src: 'eventLog', id: 'log', systemId: 'log' },
    { src: 'inbox', id: 'inbox', systemId: 'inbox', input: {} },
    { src: 'gate', id: 'gate', systemId: 'gate', input: ({ context }) => context.gate },
    { src: 'sources', id: 'sources', systemId: 'sources' },
    { src: 'watcher', id: 'watcher', systemId: 'watcher' },
  ],
});
