import { assign, fromCallback, sendTo, setup } from 'xstate';
import type { PulseFileName } from './pulse-files.js';

/** The external sources config, also under `.pulse/`. */
export const SOURCES_FILE = 'sources.json';
/** The user's focus (quiet until a time), also under `.pulse/`. */
export const FOCUS_FILE = 'focus.json';

/** The names the file-watching effect reports. */
export type WatchedName = PulseFileName | typeof SOURCES_FILE | typeof FOCUS_FILE | 'unknown';

/** What the file-watching effect reports to the watcher. */
export type WatchReport =
  | { type: 'watch.ready' }
  | { type: 'watch.change'; name: WatchedName }
  | { type: 'watch.error'; message: string };

export interface WatcherContext {
  lastError: string | null;
  errorCount: number;
  changesSeen: number;
}

/**
 * Turns file-system notices about `.pulse/` into hints: `file.changed` for the log owner (which
 * decides, by hash, whether anything changed), `config.changed` for the sources supervisor and
 * `focus.changed` for the focus actor.
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
  guards: {
    isSourcesFile: ({ event }) => event.type === 'watch.change' && event.name === SOURCES_FILE,
    isFocusFile: ({ event }) => event.type === 'watch.change' && event.name === FOCUS_FILE,
  },
  actions: {
    forwardChange: sendTo(
      ({ system }) => system.get('log'),
      ({ event }) => ({
        type: 'file.changed' as const,
        name:
          event.type === 'watch.change' && event.name !== SOURCES_FILE && event.name !== FOCUS_FILE
            ? event.name
            : 'unknown',
      }),
    ),
    forwardConfigChange: sendTo(({ system }) => system.get('sources'), { type: 'config.changed' as const }),
    forwardFocusChange: sendTo(({ system }) => system.get('focus'), { type: 'focus.changed' as const }),
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
    'watch.change': [
      { guard: 'isSourcesFile', actions: ['countChange', 'forwardConfigChange'] },
      { guard: 'isFocusFile', actions: ['countChange', 'forwardFocusChange'] },
      { actions: ['countChange', 'forwardChange'] },
    ],
    'watch.error': { actions: 'recordError' },
  },
  states: {
    starting: {
      description: 'The file watcher is scanning .pulse/ before it reports changes.',
      on: { 'watch.ready': 'watching' },
    },
    watching: {
      description:
        'The first scan is done: each change under .pulse/ goes as a hint to the actor that owns the file. An error is recorded and watching goes on.',
    },
  },
});
