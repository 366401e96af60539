import { afterEach, describe, expect, it } from 'vitest';
import {
  type AnyActorRef,
  createActor,
  fromCallback,
  fromPromise,
  type InspectionEvent,
  waitFor,
} from 'xstate';
import type { InboxEvent } from '../../machines/external.js';
import { inboxMachine } from '../../machines/inbox.js';
import type {
  AcceptInput,
  AcceptOutput,
  LoadedInbox,
  OfferReply,
  SettleEvent,
  SettlementWrite,
} from '../../machines/inbox-context.js';
import { answerOf, type Reply, type ReplyOut } from '../../machines/reply.js';
import { ask } from '../../src/system/ask.js';
import { inboxEvent } from '../support/inbox-event.js';

/*
 * The inbox writes the gate's settlements through its `persistSettlement` actor, one at a time,
 * in the order decided. Here each write is finished by hand, so what the inbox does while one is
 * still on its way to disk can be seen.
 */

const event = inboxEvent;

const settle = (seq: number, consumed: string[], reply: ReplyOut | null = null): SettleEvent => ({
  type: 'inbox.settle',
  seq,
  at: Date.UTC(2026, 0, 1),
  consumed,
  putBack: [],
  deadLettered: [],
  reply,
});

/** A stub that hears the replies of the acks the settlements record, as the ask module would. */
const repliesHeard = () => {
  const heard: Reply<unknown>[] = [];
  const replyTo = createActor(fromCallback<Reply<unknown>>(({ receive }) => receive((r) => heard.push(r))));
  running.push(replyTo);
  replyTo.start();
  return { heard, ackOf: (requestId: number) => answerOf({ requestId, replyTo }, `ack ${requestId}`) };
};

/** A settlement write on its way to disk, finished by the test. */
interface Write {
  input: SettlementWrite;
  done(): void;
  fail(error: Error): void;
}

const running: Array<{ stop(): void }> = [];
afterEach(() => {
  for (const actor of running.splice(0)) actor.stop();
});

const start = async (restored: InboxEvent[]) => {
  const writes: Write[] = [];
  /** The `persistSettlement` actors the inspector saw start. */
  const inspected: AnyActorRef[] = [];
  const inspect = (event: InspectionEvent) => {
    const ref = event.actorRef as AnyActorRef & { src?: unknown };
    if (event.type === '@xstate.actor' && ref.src === 'persistSettlement') inspected.push(ref);
  };
  const inbox = createActor(
    inboxMachine.provide({
      actors: {
        loadInbox: fromPromise<LoadedInbox>(async () => ({ events: restored, deadLetters: [] })),
        acceptItems: fromPromise<AcceptOutput, AcceptInput>(async ({ input }) => ({
          inserted: input.items.map((item) => ({
            ...event(Number(item.itemId.slice(1))),
            title: item.title,
          })),
          capped: false,
        })),
        persistSettlement: fromPromise<void, SettlementWrite>(
          ({ input }) =>
            new Promise((resolve, reject) => writes.push({ input, done: () => resolve(), fail: reject })),
        ),
      },
      actions: { wakeGate: () => {} },
    }),
    { input: {}, inspect },
  );
  running.push(inbox);
  inbox.start();
  await waitFor(inbox, (s) => s.matches('ready'), { timeout: 1000 });
  return { inbox, writes, inspected, seqs: () => writes.map((w) => w.input.settlement.seq) };
};

describe('the inbox writing settlements', () => {
  it('writes them one at a time in the order decided, and answers each ack only once its own write is done', async () => {
    const { inbox, writes, inspected, seqs } = await start([event(1), event(2), event(3)]);
    const { heard, ackOf } = repliesHeard();
    expect(await ask(inbox, (asking) => ({ type: 'inbox.drain', ...asking }))).toHaveLength(3);
    inbox.send(settle(1, ['ext_1'], ackOf(1)));
    inbox.send(settle(2, ['ext_2'], ackOf(2)));
    inbox.send(settle(3, ['ext_3']));
    const taken = inbox.getSnapshot();
    expect(taken.context.out, 'each settlement is taken at once').toEqual([]);
    expect(taken.matches({ ready: { settlements: 'persisting' } })).toBe(true);
    expect(seqs(), 'the second waits for the first').toEqual([1]);
    expect(taken.context.settleSaved).toBe(0);
    expect(heard, 'no ack is answered before its settlement is on disk').toEqual([]);

    writes[0]!.done();
    await waitFor(inbox, (s) => s.context.settleSaved === 1, { timeout: 1000 });
    expect(heard).toEqual([{ type: 'reply', requestId: 1, answer: 'ack 1' }]);
    expect(seqs()).toEqual([1, 2]);
    expect(inbox.getSnapshot().context.unsaved.map((u) => u.settlement.seq)).toEqual([2, 3]);

    writes[1]!.fail(new Error('ENOSPC: no space left on device'));
    await waitFor(inbox, (s) => s.context.unsaved.length === 1, { timeout: 1000 });
    expect(inbox.getSnapshot().context).toMatchObject({
      settleSaved: 1,
      lastError: 'Could not record what happened to delivered events: ENOSPC: no space left on device',
    });
    expect(heard.at(-1), 'the ack whose settlement failed is told why').toEqual({
      type: 'reply',
      requestId: 2,
      error:
        'The ack was accepted but could not be written to inbox.jsonl: ENOSPC: no space left on device. Check that .pulse/ is writable.',
    });
    expect(seqs(), 'a failed write is not tried again: the next one follows').toEqual([1, 2, 3]);

    writes[2]!.done();
    await waitFor(inbox, (s) => s.context.settleSaved === 3, { timeout: 1000 });
    const after = inbox.getSnapshot();
    expect(after.matches({ ready: { settlements: 'idle' } })).toBe(true);
    expect(after.context.unsaved).toEqual([]);
    expect(
      inspected.map((ref) => ref.id),
      'each write is an actor the inspector sees, invoked by `persisting`',
    ).toEqual(Array(3).fill('0.inbox.ready.settlements.persisting'));
  });

  it('writes an offer while a settlement is still on its way to disk', async () => {
    const { inbox, writes } = await start([event(1)]);
    await ask(inbox, (asking) => ({ type: 'inbox.drain', ...asking }));
    inbox.send(settle(1, ['ext_1']));
    const replies: OfferReply[] = [];
    const replyTo = createActor(fromCallback<OfferReply>(({ receive }) => receive((r) => replies.push(r))));
    running.push(replyTo);
    replyTo.start();
    inbox.send({
      type: 'inbox.offer',
      pollId: 1,
      source: 'cal',
      server: 'cal-server',
      items: [{ itemId: 'i2', title: 'Item 2', startsAt: null, detail: '' }],
      replyTo,
    });
    await waitFor(inbox, (s) => s.context.events.length === 1, { timeout: 1000 });
    expect(replies).toMatchObject([{ pollId: 1, inserted: 1 }]);
    expect(inbox.getSnapshot().matches({ ready: { settlements: 'persisting' } })).toBe(true);
    writes[0]!.done();
    await waitFor(inbox, (s) => s.context.settleSaved === 1, { timeout: 1000 });
  });
});
