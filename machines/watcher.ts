import { assign, enqueueActions, fromCallback, sendTo, setup } from 'xstate';
import { errorMessage } from './error-message.js';
import {
  FOCUS_FILE,
  SOURCES_FILE,
  type WatchedName,
  type WatcherContext,
  type WatchReport,
  watchRetryDelayMs,
} from './watcher-context.js';

/**
 * Turns file-system notices about `.pulse/` into hints: `file.changed` for the event log (which
 * decides, by hash, whether anything changed), `config.changed` for the sources supervisor and
 * `focus.changed` for the focus actor. When the watch fails it polls the files and retries.
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
    pollFolder: fromCallback<WatchReport>(() => {
      throw new Error('pollFolder not provided');
    }),
  },
  delays: {
    retryDelay: ({ context }) => watchRetryDelayMs(context.failures),
  },
  guards: {
    isSourcesFile: (_, { name }: { name: WatchedName }) => name === SOURCES_FILE,
    isFocusFile: (_, { name }: { name: WatchedName }) => name === FOCUS_FILE,
  },
  actions: {
    /** Tells the event log which of its files changed (any other name: it looks at all of them). */
    forwardChange: sendTo(
      ({ system }) => system.get('log'),
      (_, { name }: { name: WatchedName }) => ({
        type: 'file.changed' as const,
        name: name !== SOURCES_FILE && name !== FOCUS_FILE ? name : 'unknown',
      }),
    ),
    forwardConfigChange: sendTo(({ system }) => system.get('sources'), { type: 'config.changed' as const }),
    forwardFocusChange: sendTo(({ system }) => system.get('focus'), { type: 'focus.changed' as const }),
    /** Asks every owner to read its files again: a change made while the watch and the poll handed over was seen by neither. */
    rescanAll: enqueueActions(({ enqueue, system }) => {
      const hints = [
        ['log', { type: 'file.changed', name: 'unknown' }],
        ['sources', { type: 'config.changed' }],
        ['focus', { type: 'focus.changed' }],
      ] as const;
      for (const [id, hint] of hints) {
        const owner = system.get(id);
        if (owner !== undefined) enqueue.sendTo(owner, hint);
      }
    }),
    countChange: assign(({ context }) => ({ changesSeen: context.changesSeen + 1 })),
    /** The watch failed: poll until it works again, and say why. */
    recordFailure: assign(({ context }, { message }: { message: string }) => ({
      lastError: message,
      errorCount: context.errorCount + 1,
      down: message,
      failures: context.failures + 1,
    })),
    recordRecovery: assign({ down: null, failures: 0 }),
  },
}).createMachine({
  id: 'watcher',
  context: { lastError: null, errorCount: 0, changesSeen: 0, down: null, failures: 0 },
  initial: 'watching',
  on: {
    'watch.change': [
      {
        guard: { type: 'isSourcesFile', params: ({ event }) => event },
        actions: ['countChange', 'forwardConfigChange'],
      },
      {
        guard: { type: 'isFocusFile', params: ({ event }) => event },
        actions: ['countChange', 'forwardFocusChange'],
      },
      { actions: ['countChange', { type: 'forwardChange', params: ({ event }) => event }] },
    ],
  },
  states: {
    watching: {
      description:
        'Watching .pulse/ and the project root, two watches whatever else lies there: each change to a file pulse owns goes as a hint to the actor that owns it.',
      invoke: {
        src: 'watchFolder',
        id: 'folder',
        onError: {
          target: 'polling',
          actions: [
            { type: 'recordFailure', params: ({ event }) => ({ message: errorMessage(event.error) }) },
            'rescanAll',
          ],
        },
      },
      on: {
        'watch.error': {
          target: 'polling',
          actions: [
            { type: 'recordFailure', params: ({ event }) => ({ message: event.message }) },
            'rescanAll',
          ],
        },
      },
    },
    polling: {
      description:
        'The watch failed (out of inotify watches, say): the files pulse owns are polled every second, status and /healthz say so, and the watch is tried again after a wait that doubles with each failure, up to 30 s. The poll runs on through the tries, so no change falls between two polls.',
      invoke: { src: 'pollFolder', id: 'poll' },
      initial: 'waiting',
      states: {
        waiting: {
          description: 'Polling until the next try of the watch.',
          after: { retryDelay: 'retrying' },
        },
        retrying: {
          description:
            'Trying the watch again beside the poll: back to watching once it reports ready, else waiting longer.',
          invoke: {
            src: 'watchFolder',
            id: 'retry',
            onError: {
              target: 'waiting',
              actions: {
                type: 'recordFailure',
                params: ({ event }) => ({ message: errorMessage(event.error) }),
              },
            },
          },
          on: {
            'watch.ready': { target: '#watcher.watching', actions: ['recordRecovery', 'rescanAll'] },
            'watch.error': {
              target: 'waiting',
              actions: { type: 'recordFailure', params: ({ event }) => ({ message: event.message }) },
            },
          },
        },
      },
    },
  },
});
