import { assign, fromPromise, setup } from 'xstate';
import { errorMessage } from './error-message.js';
import {
  KEYS_KEPT,
  type Notification,
  type NotifierContext,
  type NotifierEvent,
  type NotifyOutcome,
  QUEUE_LIMIT,
} from './notifier-context.js';

/**
 * Desktop notifications for `pulse start --notify`: each one asked for once, shown one at a time
 * by the `notifyDesktop` effect (notify-send or osascript), never blocking anything else. Without
 * `--notify` it stays `off`; with no notifier on the machine it says so once and stops trying.
 */
export const notifierMachine = setup({
  types: {
    context: {} as NotifierContext,
    events: {} as NotifierEvent,
  },
  actors: {
    notifyDesktop: fromPromise<NotifyOutcome, Notification>(async () => ({
      shown: false,
      missing: 'no desktop notifier is provided',
    })),
  },
  guards: {
    /** `--notify` was given (the wiring provides it). */
    enabled: () => false,
    isNew: ({ context, event }) => !context.keys.includes(event.notification.key),
    hasQueued: ({ context }) => context.queue.length > 0,
    isMissing: (_, outcome: NotifyOutcome) => !outcome.shown,
  },
  actions: {
    enqueue: assign(({ context, event }) => ({
      queue: [...context.queue, event.notification].slice(-QUEUE_LIMIT),
      keys: [...context.keys, event.notification.key].slice(-KEYS_KEPT),
    })),
    dequeue: assign(({ context }) => ({ queue: context.queue.slice(1) })),
    recordShown: assign(({ context }) => ({ shown: context.shown + 1, lastError: null })),
    recordMissing: assign((_, outcome: NotifyOutcome) => ({
      missing: outcome.shown ? null : outcome.missing,
      queue: [],
    })),
    recordFailure: assign(({ context }, { error }: { error: unknown }) => ({
      failures: context.failures + 1,
      lastError: errorMessage(error),
    })),
  },
}).createMachine({
  id: 'notify',
  context: { queue: [], keys: [], shown: 0, failures: 0, lastError: null, missing: null },
  initial: 'starting',
  states: {
    starting: {
      description: 'Transient: on with --notify, else off.',
      always: [{ guard: 'enabled', target: 'idle' }, { target: 'off' }],
    },
    off: {
      description: 'Desktop notifications are off (pulse start --notify turns them on).',
    },
    idle: {
      description:
        'Nothing to show: waiting for every agent to acknowledge, one held too long, or external events.',
      on: { 'notify.send': { guard: 'isNew', target: 'showing', actions: 'enqueue' } },
    },
    showing: {
      description: 'Showing a desktop notification (notify-send or osascript); the next waits its turn.',
      on: { 'notify.send': { guard: 'isNew', actions: 'enqueue' } },
      invoke: {
        src: 'notifyDesktop',
        input: ({ context }) => context.queue[0]!,
        onDone: [
          {
            guard: { type: 'isMissing', params: ({ event }) => event.output },
            target: 'unavailable',
            actions: { type: 'recordMissing', params: ({ event }) => event.output },
          },
          { target: 'shown', actions: ['dequeue', 'recordShown'] },
        ],
        onError: {
          target: 'shown',
          actions: ['dequeue', { type: 'recordFailure', params: ({ event }) => ({ error: event.error }) }],
        },
      },
    },
    shown: {
      description: 'Transient: shows the next one waiting, else idle.',
      always: [{ guard: 'hasQueued', target: 'showing' }, { target: 'idle' }],
    },
    unavailable: {
      description:
        'No desktop notifier on this machine (notify-send, osascript): said once in the log, nothing more is tried.',
    },
  },
});
