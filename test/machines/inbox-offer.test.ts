import { describe, expect, it } from 'vitest';
import { createActor, createMachine, fromPromise, sendTo, waitFor } from 'xstate';
import type { ExternalItem } from '../../machines/external.js';
import { inboxMachine } from '../../machines/inbox.js';
import type { AcceptOutput, LoadedInbox, OfferReply } from '../../machines/inbox-context.js';

const item = (itemId: string): ExternalItem => ({ itemId, title: itemId, startsAt: null, detail: '' });

/** An inbox whose seen check says `allSeen`, and a poller stand-in that offers once and keeps the reply. */
const start = (allSeen: boolean) => {
  let writes = 0;
  const inbox = createActor(
    inboxMachine.provide({
      actors: {
        loadInbox: fromPromise(async (): Promise<LoadedInbox> => ({ events: [], deadLetters: [] })),
        acceptItems: fromPromise(async (): Promise<AcceptOutput> => {
          writes++;
          return { inserted: [], capped: false };
        }),
      },
      guards: { offerAllSeen: () => allSeen },
    }),
    { input: {} },
  ).start();
  const poller = createActor(
    createMachine({
      types: {} as { context: { reply: OfferReply | null }; events: OfferReply | { type: 'offer' } },
      context: { reply: null },
      on: {
        offer: {
          actions: sendTo(inbox, ({ self }) => ({
            type: 'inbox.offer' as const,
            pollId: 7,
            source: 'cal',
            server: 'cal-server',
            items: [item('a'), item('b')],
            replyTo: self,
          })),
        },
        'inbox.offered': { actions: ({ context, event }) => Object.assign(context, { reply: event }) },
      },
    }),
  ).start();
  return { inbox, poller, writes: () => writes };
};

describe('the inbox and offers of items already seen', () => {
  it('answers an offer of items all seen at once, writing nothing', async () => {
    const { inbox, poller, writes } = start(true);
    await waitFor(inbox, (s) => s.matches('ready'));
    poller.send({ type: 'offer' });
    expect(poller.getSnapshot().context.reply).toMatchObject({ pollId: 7, inserted: 0, capped: false });
    expect(writes()).toBe(0);
    expect(inbox.getSnapshot().context.offers).toEqual([]);
  });

  it('queues and writes an offer with anything unseen', async () => {
    const { inbox, poller, writes } = start(false);
    await waitFor(inbox, (s) => s.matches('ready'));
    poller.send({ type: 'offer' });
    expect(poller.getSnapshot().context.reply).toBeNull();
    await waitFor(poller, (s) => s.context.reply !== null);
    expect(writes()).toBe(1);
  });

  it('queues offers while it is still loading, whatever the seen check says', () => {
    const { inbox, poller } = start(true);
    expect(inbox.getSnapshot().matches('loading')).toBe(true);
    poller.send({ type: 'offer' });
    expect(inbox.getSnapshot().context.offers).toHaveLength(1);
  });
});
