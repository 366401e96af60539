import { assign, fromCallback, sendTo, setup } from 'xstate';
import type { PulseFileName } from './pulse-files.js';

/** What the file-watching effect reports to the watcher. */
export type WatchReport =
  | { type: 'watch.ready' }
  | { type: 'watch.change'; name: PulseFileName | 'unknown' }
  | { type: 'watch.error'; message: string };

export interface WatcherContext {
  lastError: string | null;
  errorCount: number;
  changesSeen: number;
}

/**
 * Turns file-system notices about `.pulse/` into `file.changed` hints for the log owner.
 * A hint only asks for a reconcile; the log owner decides, by hash, whether anything changed.
 */
export const watcherMachine = setup({
  types: {
    context: {} as WatcherContext,
    events: {} as WatchReport,
  },
  actors: {
    watchFolder: fromCallback<WatchReport>(() => {
      throw new Error('watchFolder not provided');
    }),
  },
  actions: {
    forwardChange: sendTo(
      ({ system }) => system.get('log'),
      ({ event }) => ({
        type: 'file.changed' as const,
        name: event.type === 'watch.change' ? event.name : 'unknown',
      }),
    ),
    countChange: assign(({ context }) => ({ changesSeen: context.changesSeen + 1 })),
    recordError: assign(({ context, event }) =>
      event.type === 'watch.error' ? { lastError: event.message, errorCount: context.errorCount + 1 } : {},
    ),
  },
}).createMachine({
  id: 'watcher',
  context: { lastError: null, errorCount: 0, changesSeen: 0 },
  invoke: { src: 'watchFolder', id: 'folder' },
  initial: 'starting',
  on: {
    'watch.change': { actions: ['countChange', 'forwardChange'] },
    'watch.error': { actions: 'recordError' },
  },
  states: {
    starting: {
      description: 'The file watcher is scanning .pulse/ before it reports changes.',
      on: { 'watch.ready': 'watching' },
    },
    watching: {},
  },
});
