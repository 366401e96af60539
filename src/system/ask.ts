import { type ActorRef, createActor, type EventObject, fromCallback, type Snapshot } from 'xstate';
import type { Asking, Reply } from '../../machines/reply.js';
import { PulseUnavailableError } from './actors.js';

/** How long a request waits on an actor before it reports the daemon as stuck. */
export const REQUEST_TIMEOUT_MS = 10_000;

/** How long to wait, and what to say when the reply does not come. */
export interface AskOptions {
  timeoutMs?: number;
  /** The `PulseUnavailableError` message on a timeout; by default it names the actor and the request. */
  timeoutMessage?: string;
}

/** The answer a request event's `replyTo` is typed to hear. */
type AnswerOf<E> = E extends { replyTo: ActorRef<Snapshot<unknown>, Reply<infer A>> } ? A : never;

// One id counter and one map of pending replies for every request, as the MCP SDK's protocol keeps.
let nextRequestId = 1;
const pending = new Map<number, (reply: Reply<unknown>) => void>();

/** The one actor every request names as its `replyTo`: it hands each reply to its pending request. */
const replies = createActor(
  fromCallback<Reply<unknown>>(({ receive }) => {
    receive((reply) => pending.get(reply.requestId)?.(reply));
  }),
  { id: 'replies' },
).start();

/**
 * Sends `actor` the request `build` makes with a fresh request id and the replies actor, and
 * resolves with the answer of its one `reply` event; rejects with `PulseUnavailableError` when
 * the reply says why it could not be served, or when none came within the timeout.
 */
export const ask = <TEvent extends EventObject, const R extends TEvent>(
  actor: Pick<ActorRef<Snapshot<unknown>, TEvent>, 'send' | 'id'>,
  build: (asking: Asking<unknown>) => R,
  { timeoutMs = REQUEST_TIMEOUT_MS, timeoutMessage }: AskOptions = {},
): Promise<AnswerOf<Extract<TEvent, { type: R['type'] }>>> => {
  const requestId = nextRequestId++;
  const request = build({ requestId, replyTo: replies });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(requestId);
      const seconds = timeoutMs / 1000;
      reject(
        new PulseUnavailableError(
          timeoutMessage ?? `The ${actor.id} actor did not answer ${request.type} within ${seconds} s.`,
        ),
      );
    }, timeoutMs);
    pending.set(requestId, (reply) => {
      clearTimeout(timer);
      pending.delete(requestId);
      // The request's `replyTo` type is the contract: its actor answers it with that answer.
      if ('answer' in reply) resolve(reply.answer as AnswerOf<Extract<TEvent, { type: R['type'] }>>);
      else reject(new PulseUnavailableError(reply.error));
    });
    actor.send(request);
  });
};
