import { describe, expect, it } from 'vitest';
import { resolveProject } from '../../src/http/project-lookup.js';
import { SETUP_AGENTS } from '../../src/setup/agent-names.js';
import { agentSetup } from '../../src/setup/agents.js';

const target = {
  url: 'http://127.0.0.1:8765/p/abc123/mcp',
  port: 8765,
  project: '/home/me/one-project',
  runtime: { nodePath: 'node', cliPath: 'pulse' },
  transport: 'curl' as const,
  pulse: 'pulse',
  autostart: false,
};

const everyProjectNotes = SETUP_AGENTS.flatMap((agent) =>
  agentSetup(agent, target).notes.filter((note) => note.startsWith('For every project of yours')),
);

describe("setup's advice for every project", () => {
  it("never offers one project's URL for a user-level entry", () => {
    expect(everyProjectNotes.length).toBeGreaterThanOrEqual(5);
    for (const note of everyProjectNotes) {
      expect(note).not.toContain('/p/abc123/');
      expect(note).toContain('http://127.0.0.1:8765/mcp');
    }
  });

  it('says the entry is refused while the daemon serves several projects, and what to run then', () => {
    const claude = agentSetup('claude', target).notes.find((note) => note.includes('--scope user'));
    expect(claude).toContain('claude mcp add --scope user --transport http pulse http://127.0.0.1:8765/mcp.');
    expect(claude).toContain('refuses it');
    expect(claude).toContain('setup claude --write');
  });

  it('matches what pulse does with an unprefixed /mcp: the only project served, else a refusal', () => {
    const one = { id: 'abc123', root: '/home/me/one-project' };
    const two = { id: 'def456', root: '/home/me/two-project' };
    expect(resolveProject([one], undefined, 'http://127.0.0.1:8765')).toBe(one);
    expect(resolveProject([one, two], undefined, 'http://127.0.0.1:8765')).toMatchObject({ status: 409 });
  });
});
