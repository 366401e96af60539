import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSessionTable } from '../../src/system/session-table.js';

/*
 * The MCP session table on the test's clock: idle sessions close, an open stream keeps one, and
 * a full table makes room by closing the least recently used idle session, never one in use.
 * Through a spawned daemon and real clients: test/http/session-limits.test.ts.
 */

const IDLE_MS = 60_000;

/** A session as the table holds it: it only needs to close, and says whether it did. */
const session = (fails = false) => {
  const s = {
    closed: false,
    close: async () => {
      s.closed = true;
      if (fails) throw new Error('the transport was already gone');
    },
  };
  return s;
};

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

const table = (maxSessions = 10) => {
  const changes = { count: 0 };
  const sessions = createSessionTable<ReturnType<typeof session>>({ idleMs: IDLE_MS, maxSessions }, () => {
    changes.count++;
  });
  return { sessions, changes };
};

describe('the MCP session table', () => {
  it('closes a session unused for the idle time, and forgets it; each use restarts its clock', async () => {
    const { sessions, changes } = table();
    const used = session();
    const idle = session();
    sessions.add('used', used);
    sessions.add('idle', idle);
    await vi.advanceTimersByTimeAsync(IDLE_MS - 1);
    expect(sessions.use('used')).toBe(used);
    await vi.advanceTimersByTimeAsync(1);
    expect(idle.closed).toBe(true);
    expect(sessions.use('idle'), 'an expired session is unknown').toBeUndefined();
    expect(used.closed).toBe(false);
    expect(sessions.size).toBe(1);
    await vi.advanceTimersByTimeAsync(IDLE_MS);
    expect(used.closed).toBe(true);
    expect(sessions.size).toBe(0);
    expect(changes.count, 'two adds, a use, two closes').toBe(5);
  });

  it('keeps a session with an open stream past the idle time, and starts its clock when the stream ends', async () => {
    const { sessions } = table();
    const listening = session();
    sessions.add('listening', listening);
    const end = sessions.openStream('listening');
    await vi.advanceTimersByTimeAsync(3 * IDLE_MS);
    expect(listening.closed).toBe(false);
    end();
    end();
    await vi.advanceTimersByTimeAsync(IDLE_MS - 1);
    expect(listening.closed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(listening.closed).toBe(true);
  });

  it('tells who is connected, oldest first: the client it named, the agent of its last call, when it was last used', async () => {
    const { sessions } = table();
    sessions.add('a', session(), { name: 'claude-code', version: '2.1.0' });
    await vi.advanceTimersByTimeAsync(1000);
    sessions.add('b', session());
    await vi.advanceTimersByTimeAsync(1000);
    sessions.use('a', 'planner');
    sessions.use('a');
    expect(sessions.facts()).toEqual([
      {
        id: 'a',
        client: { name: 'claude-code', version: '2.1.0' },
        agent: 'planner',
        connectedAt: 1_000_000,
        lastRequestAt: 1_002_000,
      },
      { id: 'b', client: null, agent: null, connectedAt: 1_001_000, lastRequestAt: 1_001_000 },
    ]);
  });

  it('makes room at the limit by closing the least recently used idle session, never one with an open stream', () => {
    const { sessions } = table(3);
    const [first, second, third] = [session(), session(), session()];
    sessions.add('first', first);
    sessions.add('second', second);
    sessions.add('third', third);
    sessions.openStream('second');
    sessions.use('first');
    // Least recently used now: second (streaming, kept), then third.
    expect(sessions.reserve()).toBe(true);
    expect(third.closed).toBe(true);
    expect([first.closed, second.closed]).toEqual([false, false]);
    sessions.release();
    expect(sessions.size).toBe(2);
  });

  it('refuses a place when every session held has an open stream, until one ends', () => {
    const { sessions } = table(2);
    const [a, b] = [session(), session()];
    sessions.add('a', a);
    sessions.add('b', b);
    const endA = sessions.openStream('a');
    sessions.openStream('b');
    expect(sessions.reserve()).toBe(false);
    expect([a.closed, b.closed]).toEqual([false, false]);
    endA();
    expect(sessions.reserve()).toBe(true);
    expect(a.closed).toBe(true);
  });

  it('counts places held for sessions still initialising against the limit', () => {
    const { sessions } = table(2);
    expect(sessions.reserve()).toBe(true);
    expect(sessions.reserve()).toBe(true);
    expect(sessions.reserve(), 'both places are held, no session to close').toBe(false);
    sessions.release();
    expect(sessions.reserve()).toBe(true);
  });

  it('closes the sessions asked for, all of them even when one fails to close; delete forgets without closing', async () => {
    const { sessions } = table();
    const [failing, other, kept, forgotten] = [session(true), session(), session(), session()];
    sessions.add('failing', failing);
    sessions.add('other', other);
    sessions.add('kept', kept);
    sessions.add('forgotten', forgotten);
    sessions.delete('forgotten');
    await sessions.close((s) => s !== kept);
    expect([failing.closed, other.closed, kept.closed, forgotten.closed]).toEqual([true, true, false, false]);
    expect(sessions.facts().map((f) => f.id)).toEqual(['kept']);
    await vi.advanceTimersByTimeAsync(IDLE_MS);
    expect(forgotten.closed, 'a deleted session has no timer left').toBe(false);
  });
});
