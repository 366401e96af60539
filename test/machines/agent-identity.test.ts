import { describe, expect, it } from 'vitest';
import {
  callerParty,
  handleParty,
  hookParty,
  hookPartyNamed,
  isHookParty,
  namedParty,
  needsHandle,
  ONE_SHOT,
  outlivesRestart,
  partiesByKind,
  readParty,
  sessionParty,
} from '../../machines/agent-identity.js';

const isHost = (host: string) => host === 'claude' || host === 'codex';

describe('agent identity', () => {
  it('reads back every kind of party it constructs', () => {
    expect(readParty(sessionParty('01cc0e6d-aa'))).toEqual({ kind: 'session', id: '01cc0e6d-aa' });
    expect(readParty(handleParty('h_123456789'))).toEqual({ kind: 'handle', handle: 'h_123456789' });
    expect(readParty(hookParty('claude', '3f2a:b'))).toEqual({
      kind: 'hook',
      host: 'claude',
      session: '3f2a:b',
    });
    expect(readParty(namedParty('claude:x'))).toEqual({ kind: 'named', name: 'claude:x' });
    expect(readParty(ONE_SHOT)).toEqual({ kind: 'one-shot' });
  });

  it('keeps the string form state.json holds, so a restart reads old agents', () => {
    expect([sessionParty('s'), hookParty('claude', 'x'), namedParty('n'), ONE_SHOT]).toEqual([
      'session:s',
      'hook:claude:x',
      'agent:n',
      'one-shot',
    ]);
  });

  it('takes the session first, then the handle, the hook session named, the name, and last the one-shot client', () => {
    const all = { session: 's1', handle: 'hhhhhhhh', name: 'claude:abc' };
    expect(callerParty(all, isHost)).toBe(sessionParty('s1'));
    expect(callerParty({ ...all, session: undefined }, isHost)).toBe(handleParty('hhhhhhhh'));
    expect(callerParty({ name: 'claude:abc' }, isHost)).toBe(hookParty('claude', 'abc'));
    expect(callerParty({ name: 'reviewer' }, isHost)).toBe(namedParty('reviewer'));
    expect(callerParty({}, isHost)).toBe(ONE_SHOT);
  });

  it('mints a handle only for a 2026-07-28 caller that gives no session, handle or name', () => {
    const claude = { name: 'claude-code', version: '2.1.332', protocol: '2026-07-28' };
    expect(needsHandle({ client: claude })).toBe(true);
    expect(needsHandle({ client: claude, handle: 'abcdefgh' })).toBe(false);
    expect(needsHandle({ client: claude, name: 'claude:3f2a' })).toBe(false);
    expect(needsHandle({ client: claude, session: '01cc' })).toBe(false);
    // PulseAgent's nameless one-shot POSTs (no _meta revision) stay the one-shot client.
    expect(needsHandle({})).toBe(false);
  });

  it('takes a name for a hook session only when it names a known host and a session', () => {
    expect(hookPartyNamed('claude:abc', isHost)).toBe(hookParty('claude', 'abc'));
    expect(hookPartyNamed('evil:abc', isHost)).toBeNull();
    expect(hookPartyNamed('claude:', isHost)).toBeNull();
    expect(hookPartyNamed('claude', isHost)).toBeNull();
    expect(hookPartyNamed(':abc', isHost)).toBeNull();
    expect(hookPartyNamed(undefined, isHost)).toBeNull();
  });

  it('says which parties are hook sessions and which die with the daemon', () => {
    expect(isHookParty(hookParty('codex', 'x'))).toBe(true);
    expect(isHookParty(namedParty('hook'))).toBe(false);
    expect(outlivesRestart(sessionParty('x'))).toBe(false);
    expect(
      [handleParty('h'), hookParty('claude', 'x'), namedParty('n'), ONE_SHOT].every(outlivesRestart),
    ).toBe(true);
  });

  it('sorts parties by kind for /status', () => {
    expect(
      partiesByKind([
        sessionParty('s'),
        hookParty('claude', 'x'),
        handleParty('h'),
        namedParty('n'),
        ONE_SHOT,
      ]),
    ).toEqual({ mcp_sessions: ['s'], hook_sessions: ['claude:x'], handles: ['h'], names: ['n', 'one-shot'] });
  });
});
