import { assign, enqueueActions, fromPromise, setup, stateIn } from 'xstate';
import { errorMessage } from './error-message.js';
import type { FocusContext, FocusEvent, LoadedFocus } from './focus-context.js';

/**
 * Owns `focus.json`, the user's "quiet until": reads it at start and on every change, and tells
 * the gate (system id `gate`), which holds reflections until then. A broken file keeps the last
 * good focus and shows the error.
 */
export const focusMachine = setup({
  types: {
    context: {} as FocusContext,
    events: {} as FocusEvent,
  },
  actors: {
    loadFocus: fromPromise<LoadedFocus>(async () => {
      throw new Error('loadFocus not provided');
    }),
  },
  guards: {
    changedMeanwhile: stateIn({ loading: 'changedMeanwhile' }),
  },
  actions: {
    /** Tells the gate (when the system has one) the focus read, and keeps it. */
    apply: enqueueActions(({ context, enqueue, system }, { until, now }: LoadedFocus) => {
      const gate = system.get('gate');
      const focus = { type: 'gate.focus', until, now } as const;
      if (gate !== undefined) enqueue.sendTo(gate, focus);
      enqueue.assign({ until, lastError: null, loads: context.loads + 1 });
    }),
    /** Keeps the last good focus, and the error. */
    recordError: assign(({ context }, params: { error: unknown }) => ({
      lastError: errorMessage(params.error),
      loads: context.loads + 1,
    })),
  },
}).createMachine({
  id: 'focus',
  context: { until: null, lastError: null, loads: 0 },
  initial: 'loading',
  states: {
    loading: {
      description: 'Reading focus.json; a change during the read is read again once this read is done.',
      initial: 'reading',
      states: {
        reading: { description: 'No change since it began.', on: { 'focus.changed': 'changedMeanwhile' } },
        changedMeanwhile: {
          description: 'The file changed after this read began: its result is applied, then read again.',
        },
      },
      invoke: {
        src: 'loadFocus',
        onDone: [
          {
            guard: 'changedMeanwhile',
            target: 'loading',
            reenter: true,
            actions: { type: 'apply', params: ({ event }) => event.output },
          },
          { target: 'ready', actions: { type: 'apply', params: ({ event }) => event.output } },
        ],
        onError: [
          {
            guard: 'changedMeanwhile',
            target: 'loading',
            reenter: true,
            actions: { type: 'recordError', params: ({ event }) => ({ error: event.error }) },
          },
          {
            target: 'ready',
            actions: { type: 'recordError', params: ({ event }) => ({ error: event.error }) },
          },
        ],
      },
    },
    ready: {
      description: 'The gate has the focus of the last good read; a change of focus.json reads it again.',
      on: { 'focus.changed': 'loading' },
    },
  },
});
