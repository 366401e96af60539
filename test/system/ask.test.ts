import { afterEach, describe, expect, it } from 'vitest';
import { createActor, enqueueActions, setup } from 'xstate';
import { type Asking, answerOf, failedInstead } from '../../machines/reply.js';
import { PulseUnavailableError } from '../../src/system/actors.js';
import { ask } from '../../src/system/ask.js';

/*
 * `ask` against a small machine that answers as pulse's actors do: `echo` at once, `hold` only
 * when `release` comes (in any order), `fail` with an error reply, `ignore` never.
 */

type Request = { text: string } & Asking<string>;
type EchoEvent =
  | ({ type: 'echo' } & Request)
  | ({ type: 'hold' } & Request)
  | ({ type: 'fail' } & Request)
  | ({ type: 'ignore' } & Request)
  | { type: 'release'; text: string };

const echoMachine = setup({
  types: { context: {} as { held: Request[] }, events: {} as EchoEvent },
}).createMachine({
  id: 'echo',
  context: { held: [] },
  on: {
    echo: {
      actions: enqueueActions(({ enqueue, event }) => {
        const { to, event: reply } = answerOf(event, `echo: ${event.text}`);
        enqueue.sendTo(to, reply);
      }),
    },
    hold: {
      actions: enqueueActions(({ enqueue, context, event }) =>
        enqueue.assign({ held: [...context.held, event] }),
      ),
    },
    release: {
      actions: enqueueActions(({ enqueue, context, event }) => {
        const request = context.held.find((r) => r.text === event.text)!;
        const { to, event: reply } = answerOf(request, `released: ${request.text}`);
        enqueue.sendTo(to, reply);
      }),
    },
    fail: {
      actions: enqueueActions(({ enqueue, event }) => {
        const { to, event: reply } = failedInstead(answerOf(event, ''), `could not ${event.text}`);
        enqueue.sendTo(to, reply);
      }),
    },
  },
});

const running: Array<{ stop(): void }> = [];
afterEach(() => {
  for (const actor of running.splice(0)) actor.stop();
});

const start = () => {
  const actor = createActor(echoMachine, { id: 'echo' }).start();
  running.push(actor);
  return actor;
};

describe('asking an actor', () => {
  it('resolves with the answer of the one reply its request gets', async () => {
    const actor = start();
    expect(await ask(actor, (asking) => ({ type: 'echo', ...asking, text: 'hi' }))).toBe('echo: hi');
  });

  it('gives each of two requests in flight its own answer, whichever is answered first', async () => {
    const actor = start();
    const first = ask(actor, (asking) => ({ type: 'hold', ...asking, text: 'a' }));
    const second = ask(actor, (asking) => ({ type: 'hold', ...asking, text: 'b' }));
    actor.send({ type: 'release', text: 'b' });
    actor.send({ type: 'release', text: 'a' });
    expect(await Promise.all([first, second])).toEqual(['released: a', 'released: b']);
  });

  it("rejects with PulseUnavailableError and the reply's sentence when the request could not be served", async () => {
    const actor = start();
    const failed = ask(actor, (asking) => ({ type: 'fail', ...asking, text: 'write' }));
    await expect(failed).rejects.toThrow(PulseUnavailableError);
    await expect(failed).rejects.toThrow('could not write');
  });

  it('rejects naming the actor and the request when no reply comes in time, and ignores a late one', async () => {
    const actor = start();
    const late = ask(actor, (asking) => ({ type: 'hold', ...asking, text: 'late' }), { timeoutMs: 20 });
    await expect(late).rejects.toThrow('The echo actor did not answer hold within 0.02 s.');
    actor.send({ type: 'release', text: 'late' });
    const quiet = ask(actor, (asking) => ({ type: 'ignore', ...asking, text: 'x' }), {
      timeoutMs: 20,
      timeoutMessage: 'The echo never came.',
    });
    await expect(quiet).rejects.toThrow('The echo never came.');
  });
});
