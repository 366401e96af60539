import { assign, fromPromise, setup } from 'xstate';
import { errorMessage } from './error-message.js';

/** The two files a user steers with. */
export type SteerFile = 'guidance' | 'constraints';

/** Replace the file's text, or add a paragraph to it. */
export type SteerMode = 'replace' | 'append';

/** Who asked: `pulse guide` / `pulse constrain`, the status page, or another member of the fleet. */
export type SteerSource = 'cli' | 'page' | 'fleet';

/** One write asked for. */
export interface SteerRequest {
  requestId: number;
  file: SteerFile;
  text: string;
  mode: SteerMode;
  by: SteerSource;
  /** With `by: 'fleet'`, the machine the steer came from (`laptop (3f2a9c01)`). */
  origin?: string;
}

/** What a write left in the file: its path (`.pulse/guidance.md`), hash and size, and whether it changed. */
export interface SteerWritten {
  path: string;
  sha256: string;
  size: number;
  changed: boolean;
}

/** The answer to one request: what was written, or why nothing was. */
export type SteerReply = Pick<SteerRequest, 'requestId' | 'file' | 'mode' | 'by' | 'origin'> &
  ({ written: SteerWritten } | { error: string });

export interface SteerContext {
  /** Requests waiting for the write in progress, oldest first. */
  queue: SteerRequest[];
  /** The request being written now. */
  current: SteerRequest | null;
  /** The latest replies, for their callers to find by request id. */
  replies: SteerReply[];
  /** Writes that changed a file since start. */
  writes: number;
}

export type SteerEvent = { type: 'steer.write' } & SteerRequest;

/** Requests waiting at most; one more is refused at once. */
export const STEER_QUEUE_LIMIT = 16;
/** Replies kept for callers to read. */
const REPLIES_KEPT = 32;

const reply = (context: SteerContext, answer: SteerReply): SteerReply[] =>
  [...context.replies, answer].slice(-REPLIES_KEPT);

const about = ({ requestId, file, mode, by, origin }: SteerRequest) => ({
  requestId,
  file,
  mode,
  by,
  ...(origin === undefined ? {} : { origin }),
});

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
    enqueue: assign(({ context, event }) => ({ queue: [...context.queue, event] })),
    refuseBusy: assign(({ context, event }) => ({
      replies: reply(context, {
        ...about(event),
        error: `pulse is already writing ${STEER_QUEUE_LIMIT} changes to guidance and constraints: try again in a moment.`,
      }),
    })),
    takeNext: assign(({ context }) => ({ current: context.queue[0] ?? null, queue: context.queue.slice(1) })),
    recordWritten: assign(({ context }, written: SteerWritten) => ({
      replies: reply(context, { ...about(context.current!), written }),
      writes: context.writes + (written.changed ? 1 : 0),
      current: null,
    })),
    recordFailed: assign(({ context }, { error }: { error: unknown }) => ({
      replies: reply(context, { ...about(context.current!), error: errorMessage(error) }),
      current: null,
    })),
  },
}).createMachine({
  id: 'steer',
  context: { queue: [], current: null, replies: [], writes: 0 },
  initial: 'idle',
  on: {
    'steer.write': [{ guard: 'queueFull', actions: 'refuseBusy' }, { actions: 'enqueue' }],
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
        input: ({ context }) => context.current!,
        onDone: { target: 'idle', actions: { type: 'recordWritten', params: ({ event }) => event.output } },
        onError: {
          target: 'idle',
          actions: { type: 'recordFailed', params: ({ event }) => ({ error: event.error }) },
        },
      },
    },
  },
});
