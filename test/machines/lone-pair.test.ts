import { describe, expect, it } from 'vitest';
import { initialTransition, type SnapshotFrom, transition } from 'xstate';
import { replanMachine } from '../../machines/replan.js';

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
});
