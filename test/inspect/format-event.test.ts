import type { StatelyInspectionEvent } from '@statelyai/inspect';
import { describe, expect, it } from 'vitest';
import { createEventFormatter, formatStateValue } from '../../src/inspect/format-event.js';

const at = String(new Date(2026, 0, 2, 9, 5, 7, 42).getTime());
const base = { createdAt: at, id: 'x', _version: '0.7.2', rootId: 'x:0' };

const actor = (sessionId: string, name: string, parentId?: string) =>
  ({
    ...base,
    type: '@xstate.actor',
    sessionId,
    name,
    parentId,
    definition: undefined,
    snapshot: { status: 'active' },
  }) as StatelyInspectionEvent;

describe('pulse inspect lines', () => {
  it('names each actor by its registration, and says who started it', () => {
    const format = createEventFormatter();
    expect(format(actor('x:0', 'pulse'))).toBe('09:05:07.042  pulse  started');
    expect(format(actor('x:3', 'gate', 'x:0'))).toBe('09:05:07.042  gate  started (child of pulse)');
  });

  it("prints an actor named after a source without the escape sequences in the source's name", () => {
    const format = createEventFormatter();
    expect(format(actor('x:7', 'poller:cal\x1b]0;pwned\x07\x1b[2J\x9b31m'))).toBe(
      '09:05:07.042  poller:cal  started',
    );
  });

  it('prints an event with its type and sender; one sent from outside the system says so', () => {
    const format = createEventFormatter();
    format(actor('x:3', 'gate'));
    format(actor('x:4', 'inbox'));
    const send = (sessionId: string, type: string, sourceId?: string) =>
      format({
        ...base,
        type: '@xstate.event',
        sessionId,
        sourceId,
        event: { type },
      } as StatelyInspectionEvent);
    expect(send('x:4', 'inbox.settle', 'x:3')).toBe('09:05:07.042  inbox  event inbox.settle  from gate');
    expect(send('x:3', 'gate.claim')).toBe('09:05:07.042  gate  event gate.claim  from outside');
    expect(send('x:9', 'poll.now', 'x:8')).toBe('09:05:07.042  x:9  event poll.now  from x:8');
  });

  it("prints a snapshot's state value, or the status of an actor without states", () => {
    const format = createEventFormatter();
    format(actor('x:1', 'replan'));
    const snap = (snapshot: object) =>
      format({
        ...base,
        type: '@xstate.snapshot',
        sessionId: 'x:1',
        event: { type: 'x' },
        snapshot,
      } as StatelyInspectionEvent);
    expect(snap({ status: 'active', value: 'pending' })).toBe('09:05:07.042  replan  state pending');
    expect(snap({ status: 'active', value: {} })).toBe('09:05:07.042  replan  state active');
    expect(snap({ status: 'done', output: 1 })).toBe('09:05:07.042  replan  state done');
    expect(snap({ status: 'stopped', value: 'idle' })).toBe('09:05:07.042  replan  state idle (stopped)');
  });

  it('writes nested and parallel state values as dotted paths', () => {
    expect(formatStateValue({ loading: 'reading' })).toBe('loading.reading');
    expect(formatStateValue({ a: { b: 'c' }, d: 'e' })).toBe('a.b.c, d.e');
    expect(formatStateValue({ running: {} })).toBe('running');
  });
});
