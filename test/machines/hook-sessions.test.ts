import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { hookSessionsMachine } from '../../machines/hook-sessions.js';
import { FORGOTTEN_SESSION, memoryOf } from '../../machines/hook-sessions-context.js';

const remembering = (limit: number) => createActor(hookSessionsMachine, { input: { limit } }).start();

describe('what the hooks told each session', () => {
  it('merges what a session was told, keeping what it was told before', () => {
    const hooks = remembering(10);
    hooks.send({ type: 'hook.remember', session: 'claude:s1', memory: { stopHeldFor: 'evt_1' } });
    hooks.send({ type: 'hook.remember', session: 'claude:s1', memory: { toldDelivery: 'dlv_1' } });
    expect(memoryOf(hooks.getSnapshot().context, 'claude:s1')).toEqual({
      stopHeldFor: 'evt_1',
      toldPending: null,
      toldDelivery: 'dlv_1',
    });
    expect(memoryOf(hooks.getSnapshot().context, 'codex:s1')).toEqual(FORGOTTEN_SESSION);
  });

  it('forgets the session heard from least recently once past its limit, never a recent one', () => {
    const hooks = remembering(2);
    for (const session of ['a', 'b', 'a', 'c']) {
      hooks.send({ type: 'hook.remember', session, memory: { toldPending: `evt_${session}` } });
    }
    const { sessions } = hooks.getSnapshot().context;
    expect(Object.keys(sessions)).toEqual(['a', 'c']);
  });
});
