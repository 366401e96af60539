import { createActor, type EventObject, type ExecutableActionsFrom, fromCallback } from 'xstate';
import type { replanMachine } from '../../machines/replan.js';
import type { AckAnswer, AckReply, ReplanRecord } from '../../machines/replan-context.js';
import type { Reply } from '../../machines/reply.js';

type Action = ExecutableActionsFrom<typeof replanMachine>;

/** Who hears the acks' replies in a pure step of the replan lifecycle: never started, since a pure step only returns its actions. */
export const unheardReplies = createActor(fromCallback<Reply<AckAnswer>>(() => {}));

/** The events a pure step sends, in order. */
export const sentBy = (actions: readonly Action[]): EventObject[] =>
  actions.flatMap((action) => (action.type === 'xstate.sendTo' ? [action.params.event] : []));

const isReply = (event: EventObject): event is Reply<AckAnswer> => event.type === 'reply';
const isRecord = (event: EventObject): event is ReplanRecord => event.type === 'replan.record';

/**
 * The answer a pure step gives an ack, with its request id: a refusal is sent to its `replyTo` at
 * once; an accepted one rides on the record the event log is asked to write, to be sent once written.
 */
export const ackAnswerIn = (actions: readonly Action[]): (AckReply & { requestId: number }) | undefined => {
  for (const event of sentBy(actions)) {
    if (isReply(event) && 'answer' in event) return { requestId: event.requestId, ...event.answer };
    if (isRecord(event) && event.answers !== null)
      return { requestId: event.answers.asking.requestId, ...event.answers.reply };
  }
  return undefined;
};
