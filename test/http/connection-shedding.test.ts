import { describe, expect, it } from 'vitest';
import { connectionToShed, type HeldConnection } from '../../src/http/connection-shedding.js';

/*
 * Which connection makes room for a newcomer at the cap: the decision alone, on the facts the
 * cap keeps of each connection.
 */

interface Named extends HeldConnection {
  name: string;
}

const stalled = (name: string, accepted: number): Named => ({
  name,
  accepted,
  served: false,
  answering: false,
  lastActive: accepted,
});

const idle = (name: string, accepted: number, lastActive: number): Named => ({
  name,
  accepted,
  served: true,
  answering: false,
  lastActive,
});

const streaming = (name: string, accepted: number): Named => ({
  name,
  accepted,
  served: true,
  answering: true,
  lastActive: accepted + 1,
});

const shed = (held: Named[]) => connectionToShed(held)?.name ?? null;

describe('connectionToShed', () => {
  it('sheds the oldest connection that never sent a whole request, before older served ones', () => {
    const held = [
      idle('keep-alive', 1, 2),
      streaming('mcp-stream', 3),
      stalled('newer-stall', 9),
      stalled('oldest-stall', 5),
      stalled('middle-stall', 7),
    ];
    expect(shed(held)).toBe('oldest-stall');
  });

  it('never sheds a connection whose whole request is being answered, however old', () => {
    const held = [streaming('status-stream', 1), streaming('mcp-stream', 2), stalled('stall', 10)];
    expect(shed(held)).toBe('stall');
    // A first request that arrived whole and is still being answered is not a stall, though never served before.
    expect(shed([{ ...stalled('hook-being-answered', 1), answering: true }, stalled('stall', 4)])).toBe(
      'stall',
    );
  });

  it('when every connection was served, sheds the least recently active one answering nothing', () => {
    const held = [
      streaming('mcp-stream', 1),
      idle('used-just-now', 2, 40),
      idle('used-long-ago', 3, 12),
      idle('used-lately', 4, 30),
    ];
    expect(shed(held)).toBe('used-long-ago');
  });

  it('sheds a served connection stalled half-way through a later request like an idle one', () => {
    // Its later request began at 20, after the idle one's last answer at 15: the idle one is older news.
    const held = [streaming('mcp-stream', 2), idle('served-then-stalled', 1, 20), idle('idle', 3, 15)];
    expect(shed(held)).toBe('idle');
    expect(shed(held.slice(0, 2))).toBe('served-then-stalled');
  });

  it('sheds nothing when every connection is answering, so the newcomer is refused', () => {
    expect(shed([streaming('a', 1), streaming('b', 2), streaming('c', 3)])).toBeNull();
    expect(shed([])).toBeNull();
  });
});
