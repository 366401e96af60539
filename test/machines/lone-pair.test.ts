import { describe, expect, it } from 'vitest';
import { initialTransition, type SnapshotFrom, transition } from 'xstate';
import { replanMachine } from '../../machines/replan.js';
import { unheardReplies } from '../support/replan-answer.js';

type Snapshot = SnapshotFrom<typeof replanMachine>;

const restored = (): Snapshot =>
  transition(replanMachine, initialTransition(replanMachine)[0], {
    type: 'replan.restored',
    pending: { pendingEventId: null, pendingFiles: [] },
    lastAck: null,
  })[0];

const heard = (snapshot: Snapshot, party: string, client?: { name: string; version: string }): Snapshot =>
  transition(replanMachine, snapshot, {
    type: 'agent.heard',
    party,
    at: 1000,
    closes: party.startsWith('session:'),
    ...(client === undefined ? {} : { client }),
  })[0];

const agentsOf = (snapshot: Snapshot) =>
  Object.values(snapshot.context.agents).map((agent) => Object.keys(agent.parties).sort());

describe('the only hook session and the only MCP caller', () => {
  it('are tied into one agent when the client names the hook host’s product', () => {
    const snapshot = heard(heard(restored(), 'hook:codex:h1'), 'session:s1', {
      name: 'codex-mcp-client',
      version: '0.171.0',
    });
    expect(agentsOf(snapshot)).toEqual([['hook:codex:h1', 'session:s1']]);
  });

  it('are tied when the client named nothing', () => {
    const snapshot = heard(heard(restored(), 'session:s1'), 'hook:claude:h1');
    expect(agentsOf(snapshot)).toEqual([['hook:claude:h1', 'session:s1']]);
  });

  it('stay two agents when the client names another known product, such as Cursor beside Codex', () => {
    const cursor = { name: 'cursor-vscode', version: '1.0' };
    const snapshot = heard(heard(restored(), 'session:s1', cursor), 'hook:codex:h1');
    expect(agentsOf(snapshot)).toEqual([['session:s1'], ['hook:codex:h1']]);
  });

  it('are tied when the client names a product pulse does not know, by elimination as before', () => {
    const script = { name: 'my-script', version: '1' };
    const snapshot = heard(heard(restored(), 'session:s1', script), 'hook:codex:h1');
    expect(agentsOf(snapshot)).toEqual([['hook:codex:h1', 'session:s1']]);
  });

  it('stay two agents when Claude Code’s client meets a Codex hook session', () => {
    const snapshot = heard(heard(restored(), 'hook:codex:h1'), 'session:s1', {
      name: 'claude-code',
      version: '2.1.332',
    });
    expect(agentsOf(snapshot)).toHaveLength(2);
  });

  // A restart took the hook session over (or the handle); whoever comes since may be another agent.
  const afterRestart = (party: string): Snapshot =>
    transition(replanMachine, initialTransition(replanMachine)[0], {
      type: 'replan.restored',
      pending: { pendingEventId: 'evt_1', pendingFiles: ['.pulse/guidance.md'] },
      lastAck: null,
      agents: [
        {
          parties: [party, 'session:old'],
          owes_event_id: 'evt_1',
          owes_files: ['.pulse/guidance.md'],
          acked_at: null,
          tied_by: 'only-pair',
        },
      ],
      at: 1000,
    })[0];

  it('are not tied when the hook session is one a restart took over: a newcomer’s ack leaves it owing', () => {
    const snapshot = heard(afterRestart('hook:claude:a'), 'session:new');
    expect(agentsOf(snapshot)).toEqual([['hook:claude:a'], ['session:new']]);
    const acked = transition(replanMachine, snapshot, {
      type: 'replan.ack',
      requestId: 1,
      replyTo: unheardReplies,
      eventId: 'evt_1',
      target: { id: 'evt_1', path: '.pulse/guidance.md' },
      planSha256: null,
      at: '2026-12-03T00:00:00Z',
      agent: 'session:new',
    })[0];
    expect(acked.context.lastAck?.eventId, 'the newcomer’s ack was taken').toBe('evt_1');
    const owing = Object.values(acked.context.agents).filter((agent) => agent.owes !== null);
    expect(owing.map((agent) => Object.keys(agent.parties))).toEqual([['hook:claude:a']]);
  });

  it('are not tied when the MCP caller is a handle a restart took over and a new hook session comes', () => {
    const snapshot = heard(afterRestart('handle:h1'), 'hook:claude:b');
    expect(agentsOf(snapshot)).toEqual([['handle:h1'], ['hook:claude:b']]);
  });
});
