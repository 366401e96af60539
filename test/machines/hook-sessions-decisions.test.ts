import { describe, expect, it } from 'vitest';
import type { PulseCall } from '../../machines/hook-sessions-context.js';
import {
  announcedCall,
  endedCall,
  PULSE_CALL_LIMIT,
  PULSE_CALL_TTL_MS,
  startedCall,
} from '../../machines/hook-sessions-decisions.js';

const call = (party: string, over: Partial<PulseCall> = {}): PulseCall => ({
  party,
  host: 'claude',
  tool: 'pulse_ack_replan',
  useId: null,
  at: 1_000,
  ...over,
});

const anyHost = () => true;
const request = (over: Partial<Parameters<typeof announcedCall>[1]> = {}) => ({
  tool: 'pulse_ack_replan',
  useId: null,
  mayBeHost: anyHost,
  now: 2_000,
  ...over,
});

describe("pulse's tool calls announced by hooks", () => {
  it('finds the call with the tool-call id the request carries, and none for an id no hook announced', () => {
    const calls = [call('hook:claude:a', { useId: 'toolu_a' }), call('hook:claude:b', { useId: 'toolu_b' })];
    expect(announcedCall(calls, request({ useId: 'toolu_b' }))?.party).toBe('hook:claude:b');
    expect(announcedCall(calls, request({ useId: 'toolu_forged' }))).toBeNull();
  });

  it('takes the only call of that tool in flight for a request with no id, and none when two agents call at once', () => {
    const one = [call('hook:copilot:a', { host: 'copilot' })];
    expect(announcedCall(one, request())?.party).toBe('hook:copilot:a');
    const two = [...one, call('hook:copilot:b', { host: 'copilot' })];
    expect(announcedCall(two, request())).toBeNull();
    expect(announcedCall(one, request({ tool: 'pulse_ack_events' }))).toBeNull();
  });

  it('never takes a call that has an id for a request that carries none (its own request would carry it)', () => {
    expect(announcedCall([call('hook:claude:a', { useId: 'toolu_a' })], request())).toBeNull();
  });

  it('never takes a call from a host whose product the client is not, nor one older than the wait allowed', () => {
    const calls = [call('hook:claude:a')];
    expect(announcedCall(calls, request({ mayBeHost: (host) => host === 'copilot' }))).toBeNull();
    expect(announcedCall(calls, request({ now: 1_000 + PULSE_CALL_TTL_MS + 1 }))).toBeNull();
  });

  it("replaces a session's earlier call of the same tool, forgets an ended one, and keeps at most the limit", () => {
    const first = startedCall([], call('hook:claude:a', { at: 1 }));
    const again = startedCall(first, call('hook:claude:a', { at: 2 }));
    expect(again).toEqual([call('hook:claude:a', { at: 2 })]);
    expect(endedCall(again, 'hook:claude:a', 'pulse_ack_replan')).toEqual([]);
    let many: PulseCall[] = [];
    for (let n = 0; n <= PULSE_CALL_LIMIT; n++) many = startedCall(many, call(`hook:claude:${n}`));
    expect(many).toHaveLength(PULSE_CALL_LIMIT);
    expect(many[0]!.party).toBe('hook:claude:1');
  });
});
