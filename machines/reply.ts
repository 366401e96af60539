import type { ActorRef, AnyActorRef, EventObject, Snapshot } from 'xstate';

/*
 * The one way an actor answers a request. A request event carries its `requestId` and its
 * `replyTo`, as a poller's offer carries its own ref (xstate v5 has no `respond()`: the asker
 * names who hears the answer), and the actor that ends the request sends `replyTo` one `reply`
 * event: so a machine answers without knowing who asked, keeps no reply in its context, and
 * every answer shows in the inspector as an event.
 */

/** The answer to one request, or why it could not be served. */
export type Reply<A> = { type: 'reply'; requestId: number } & ({ answer: A } | { error: string });

/** What every request event carries: its id, and who hears its reply. */
export interface Asking<A> {
  requestId: number;
  replyTo: ActorRef<Snapshot<unknown>, Reply<A>>;
}

/** A reply ready to send: where it goes, and the event. */
export interface ReplyOut {
  to: AnyActorRef;
  event: Reply<unknown>;
}

/** Only the asking of a request event, to keep while the request is served. */
export const askingOf = <A>({ requestId, replyTo }: Asking<A>): Asking<A> => ({ requestId, replyTo });

/** The reply that answers `asking` with `answer`. */
export const answerOf = <A>({ requestId, replyTo }: Asking<A>, answer: A): ReplyOut => ({
  to: replyTo,
  event: { type: 'reply', requestId, answer },
});

/** The same request failed after all: `error` instead of the answer it was to get. */
export const failedInstead = ({ to, event }: ReplyOut, error: string): ReplyOut => ({
  to,
  event: { type: 'reply', requestId: event.requestId, error },
});

/** A decision of a machine that answers: what changes in its context, and what it sends (null: nothing). */
export interface Answering<TContext> {
  changes: Partial<TContext>;
  reply: { to: AnyActorRef; event: EventObject } | null;
}

/** What applying such a decision needs of an `enqueueActions` action's arguments. */
interface Enqueuing<TContext> {
  enqueue: { assign(changes: Partial<TContext>): void; sendTo(to: AnyActorRef, event: EventObject): void };
}

/** Applies a decision inside `enqueueActions`: its changes to the context, then its reply. */
export const applyAnswering = <TContext>(
  { enqueue }: Enqueuing<TContext>,
  { changes, reply }: Answering<TContext>,
): void => {
  enqueue.assign(changes);
  if (reply !== null) enqueue.sendTo(reply.to, reply.event);
};
