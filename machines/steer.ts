import { assign, enqueueActions, fromPromise, setup } from 'xstate';
import { errorMessage } from './error-message.js';
import { answerOf } from './reply.js';
import {
  askedOf,
  outcomeOf,
  STEER_QUEUE_LIMIT,
  type SteerAnswer,
  type SteerAsked,
  type SteerContext,
  type SteerEvent,
  type SteerRequest,
  type SteerWritten,
  writeOf,
} from './steer-context.js';

/**
 * The one way pulse writes guidance.md and constraints.md for the user (`pulse guide`,
 * `pulse constrain`, the status page): one write at a time, in the order asked, so an append never
 * loses another's. The write itself is the `writeSteer` effect (atomic, never through a symlink);
 * the event log then logs the change as it logs any edit.
 */
export const steerMachine = setup({
  types: {
    context: {} as SteerContext,
    events: {} as SteerEvent,
  },
  actors: {
    writeSteer: fromPromise<SteerWritten, SteerRequest>(async () => {
      throw new Error('writeSteer not provided');
    }),
  },
  guards: {
    queueFull: ({ context }) => context.queue.length >= STEER_QUEUE_LIMIT,
    hasQueued: ({ context }) => context.queue.length > 0,
  },
  actions: {
    enqueue: assign(({ context, event }) => ({ queue: [...context.queue, askedOf(event)] })),
    /** Answers a request (the reply goes to the asker's `replyTo`) and keeps how it ended. */
    answer: enqueueActions(({ enqueue }, { asked, answer }: { asked: SteerAsked; answer: SteerAnswer }) => {
      const { to, event } = answerOf(asked, answer);
      enqueue.sendTo(to, event);
      enqueue.assign({ last: outcomeOf(asked, answer) });
    }),
    takeNext: assign(({ context }) => ({ current: context.queue[0] ?? null, queue: context.queue.slice(1) })),
    recordWritten: assign(({ context }, written: SteerWritten) => ({
      writes: context.writes + (written.changed ? 1 : 0),
      current: null,
    })),
    recordFailed: assign({ current: null }),
  },
}).createMachine({
  id: 'steer',
  context: { queue: [], current: null, writes: 0, last: null },
  initial: 'idle',
  on: {
    'steer.write': [
      {
        guard: 'queueFull',
        actions: {
          type: 'answer',
          params: ({ event }) => ({
            asked: event,
            answer: {
              refused: `pulse is already writing ${STEER_QUEUE_LIMIT} changes to guidance and constraints: try again in a moment.`,
            },
          }),
        },
      },
      { actions: 'enqueue' },
    ],
  },
  states: {
    idle: {
      description: 'No write of guidance or constraints is asked for.',
      always: { guard: 'hasQueued', target: 'writing' },
    },
    writing: {
      description:
        'Writing one change to guidance.md or constraints.md atomically; changes asked for meanwhile wait their turn.',
      entry: 'takeNext',
      invoke: {
        src: 'writeSteer',
        input: ({ context }) => writeOf(context.current!),
        onDone: {
          target: 'idle',
          actions: [
            {
              type: 'answer',
              params: ({ context, event }) => ({
                asked: context.current!,
                answer: { written: event.output },
              }),
            },
            { type: 'recordWritten', params: ({ event }) => event.output },
          ],
        },
        onError: {
          target: 'idle',
          actions: [
            {
              type: 'answer',
              params: ({ context, event }) => ({
                asked: context.current!,
                answer: { refused: errorMessage(event.error) },
              }),
            },
            'recordFailed',
          ],
        },
      },
    },
  },
});
