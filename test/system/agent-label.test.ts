import { describe, expect, it } from 'vitest';
import { handleParty, hookParty, namedParty, ONE_SHOT, sessionParty } from '../../machines/agent-identity.js';
import { agentLabel } from '../../src/system/agent-label.js';

const session = sessionParty('3f2a9c01-7e55-4b8a-9d3c-0e1f2a3b4c5d');

describe('agentLabel', () => {
  it('names an agent by the product its clientInfo names, with its version and session', () => {
    expect(agentLabel({ parties: [session], client: { name: 'claude-code', version: '2.1.332' } })).toBe(
      'Claude Code 2.1.332 (session 3f2a9c01…)',
    );
    expect(agentLabel({ parties: [session], client: { name: 'codex-mcp-client', version: '0.171.0' } })).toBe(
      'Codex 0.171.0 (session 3f2a9c01…)',
    );
  });

  it('maps each known client to its product, and keeps an unknown client’s own name', () => {
    const product = (name: string) => agentLabel({ parties: [session], client: { name, version: '1' } });
    expect(product('gemini-cli-mcp-client')).toMatch(/^Gemini CLI 1 /);
    expect(product('github-copilot-developer')).toMatch(/^Copilot CLI 1 /);
    expect(product('opencode')).toMatch(/^opencode 1 /);
    expect(product('cursor-vscode')).toMatch(/^Cursor 1 /);
    expect(product('Visual Studio Code')).toMatch(/^Visual Studio Code 1 /);
    expect(product('my-agent')).toMatch(/^my-agent 1 \(session/);
  });

  it('names an agent known only by its hooks by its host', () => {
    expect(agentLabel({ parties: [hookParty('claude', '4f1c2b3a-aaaa')] })).toBe(
      'Claude Code (hook session 4f1c2b3a…)',
    );
  });

  it('lists every party of a tied agent after the product', () => {
    expect(
      agentLabel({
        parties: [hookParty('claude', '4f1c2b3a-aaaa'), session],
        client: { name: 'claude-code', version: '2.1.332' },
      }),
    ).toBe('Claude Code 2.1.332 (hook session 4f1c2b3a…, session 3f2a9c01…)');
  });

  it('names callers without a client by what they gave', () => {
    expect(agentLabel({ parties: [ONE_SHOT] })).toBe('a one-shot caller');
    expect(agentLabel({ parties: [namedParty('reviewer')] })).toBe('agent reviewer');
    expect(agentLabel({ parties: [handleParty('AbCdEfGh12345678')] })).toBe(
      'an MCP client (handle AbCdEfGh…)',
    );
    expect(agentLabel({ parties: [session] })).toBe('an MCP client (session 3f2a9c01…)');
    expect(agentLabel({ parties: [] })).toBe('an unknown agent');
  });

  it('prints no escape sequence or line break a hostile client sent as its name', () => {
    const label = agentLabel({
      parties: [session],
      client: { name: '\u001b]52;c;cGF3bmVk\u0007evil\nowes ack: nobody', version: '1\u001b[2J' },
    });
    expect([...label].some((c) => c.charCodeAt(0) < 0x20 || c === '\u001b')).toBe(false);
    expect(label).toBe('evil owes ack: nobody 1 (session 3f2a9c01…)');
  });

  it('bounds a long client name', () => {
    const label = agentLabel({ parties: [session], client: { name: 'x'.repeat(500), version: '1' } });
    expect(label.length).toBeLessThan(80);
  });
});
