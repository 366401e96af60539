import { assign, enqueueActions, fromPromise, setup } from 'xstate';
import { errorMessage } from './error-message.js';
import type { PolledSource } from './external.js';
import type { GateSettings } from './gate.js';
import { pollerMachine } from './poller.js';

/** What the sources supervisor keeps of a loaded config: no server secrets, only what pollers need. */
export interface LoadedSources {
  sources: PolledSource[];
  /** Per source, a string that changes iff the poller must restart (its config or its server's). */
  fingerprints: Record<string, string>;
  warnings: string[];
  /** The reflection gate's settings from the same file (defaults where it says nothing). */
  gate: GateSettings;
}

export interface SourcesContext {
  sources: PolledSource[];
  fingerprints: Record<string, string>;
  warnings: string[];
  /** The last config error; the last good config keeps running meanwhile. */
  error: string | null;
  loads: number;
}

export type SourcesEvent = { type: 'config.changed' };

export const pollerId = (source: string) => `poller:${source}`;

/**
 * Owns `sources.json`: loads it, hands its `reflection` settings to the gate, and reconciles
 * one poller per enabled source with it: new sources start, removed ones stop, changed ones restart. A broken edit keeps the last good
 * config running and shows the error.
 */
export const sourcesMachine = setup({
  types: {
    context: {} as SourcesContext,
    events: {} as SourcesEvent,
  },
  actors: {
    poller: pollerMachine,
    loadSources: fromPromise<LoadedSources>(async () => {
      throw new Error('loadSources not provided');
    }),
  },
}).createMachine({
  id: 'sources',
  context: { sources: [], fingerprints: {}, warnings: [], error: null, loads: 0 },
  initial: 'loading',
  states: {
    loading: {
      description: 'Reading sources.json (and PULSE_MCP_SERVERS) and reconciling the pollers with it.',
      on: { 'config.changed': { target: 'loading', reenter: true } },
      invoke: {
        src: 'loadSources',
        onDone: {
          target: 'running',
          actions: enqueueActions(({ context, event, enqueue, system }) => {
            const next = event.output;
            const gate = system.get('gate');
            const configure = { type: 'gate.configure' as const, settings: next.gate };
            if (gate !== undefined) enqueue.sendTo(gate, configure);
            const wanted = new Map(next.sources.filter((s) => s.enabled).map((s) => [s.name, s]));
            for (const source of context.sources) {
              if (!source.enabled) continue;
              const keep =
                wanted.has(source.name) &&
                next.fingerprints[source.name] === context.fingerprints[source.name];
              if (keep) wanted.delete(source.name);
              else enqueue.stopChild(pollerId(source.name));
            }
            for (const source of wanted.values()) {
              enqueue.spawnChild('poller', {
                id: pollerId(source.name),
                systemId: pollerId(source.name),
                input: { source },
              });
            }
            enqueue.assign({
              sources: next.sources,
              fingerprints: next.fingerprints,
              warnings: next.warnings,
              error: null,
              loads: context.loads + 1,
            });
          }),
        },
        onError: {
          target: 'running',
          actions: assign(({ context, event }) => ({
            error: errorMessage(event.error),
            loads: context.loads + 1,
          })),
        },
      },
    },
    running: {
      description: 'Pollers run for the last good config; an edit of sources.json reloads it.',
      on: { 'config.changed': 'loading' },
    },
  },
});
