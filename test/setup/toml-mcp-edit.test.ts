import { describe, expect, it } from 'vitest';
import type { EditOptions } from '../../src/setup/file-edit.js';
import { tomlMcpEdit } from '../../src/setup/toml-mcp-edit.js';

const URL = 'http://127.0.0.1:8765/mcp';
const TABLE = `[mcp_servers.pulse]\nurl = "${URL}"\ndefault_tools_approval_mode = "approve"\n`;
const options: EditOptions = { force: false, forceCommand: 'pulse setup codex --write --force' };
const edit = (text: string | null, force = false) => tomlMcpEdit(URL)(text, { ...options, force });

describe('the Codex config.toml edit', () => {
  it('appends the table after the user text, byte for byte, with a blank line between', () => {
    const mine = 'model = "o3" # mine\n\n[mcp_servers.docs]\ncommand = "docs"\n';
    expect(edit(mine)).toEqual({ kind: 'write', text: `${mine}\n${TABLE}` });
    expect(edit('model = "o3"')).toEqual({ kind: 'write', text: `model = "o3"\n\n${TABLE}` });
    expect(edit(null)).toEqual({ kind: 'write', text: TABLE });
  });

  it('keeps Windows line endings', () => {
    expect(edit('model = "o3"\r\n')).toEqual({
      kind: 'write',
      text: `model = "o3"\r\n\r\n[mcp_servers.pulse]\r\nurl = "${URL}"\r\ndefault_tools_approval_mode = "approve"\r\n`,
    });
  });

  it('finds our table however its key is quoted, and leaves it when the url is ours and its tools approved', () => {
    for (const header of [
      '[mcp_servers.pulse]',
      '[ mcp_servers . "pulse" ]',
      "['mcp_servers'.pulse] # pulse",
    ]) {
      expect(edit(`${header}\nurl = '${URL}'\ndefault_tools_approval_mode = 'approve'\n`)).toEqual({
        kind: 'unchanged',
      });
    }
    expect(
      edit(`[mcp_servers]\npulse = { url = "${URL}", default_tools_approval_mode = "approve" }\n`),
    ).toEqual({ kind: 'unchanged' });
  });

  it("adds the approval line under our url when an older setup's table lacks it, and nothing else", () => {
    const older = `# mine\n[mcp_servers.pulse]\nurl = "${URL}"\nstartup_timeout_sec = 5\n\n[mcp_servers.docs]\ncommand = "docs"\n`;
    expect(edit(older)).toEqual({
      kind: 'write',
      text: `# mine\n[mcp_servers.pulse]\nurl = "${URL}"\ndefault_tools_approval_mode = "approve"\nstartup_timeout_sec = 5\n\n[mcp_servers.docs]\ncommand = "docs"\n`,
    });
    expect(edit(`[mcp_servers]\npulse = { url = "${URL}" }\n`)).toMatchObject({ kind: 'invalid' });
  });

  it("reports the user's own approval mode for pulse as a conflict, since Codex would then ask for each tool", () => {
    const prompting = `[mcp_servers.pulse]\nurl = "${URL}"\ndefault_tools_approval_mode = "prompt"\n`;
    expect(edit(prompting)).toMatchObject({
      kind: 'conflict',
      problem: expect.stringContaining('default_tools_approval_mode = "prompt"'),
    });
    expect(edit(prompting, true)).toEqual({
      kind: 'write',
      text: `[mcp_servers.pulse]\nurl = "${URL}"\ndefault_tools_approval_mode = "approve"\n`,
      replaced: 'default_tools_approval_mode = "prompt"',
    });
  });

  it('reports a pulse table with another url, or with a command, as a conflict', () => {
    const other = edit('[mcp_servers.pulse]\nurl = "http://127.0.0.1:9000/mcp"\n');
    expect(other).toMatchObject({
      kind: 'conflict',
      problem: expect.stringContaining('at http://127.0.0.1:9000/mcp'),
    });
    expect(other.kind === 'conflict' && other.fix).toContain('--port 9000');
    const stdio = edit('[mcp_servers.pulse]\ncommand = "pulse"\n[mcp_servers.pulse.env]\nA = "1"\n');
    expect(stdio).toMatchObject({ kind: 'conflict', problem: expect.stringContaining('without a url') });
  });

  it('with force swaps the old table and its sub-tables for ours, keeping the rest and its comments', () => {
    const before = [
      'model = "o3"',
      '[mcp_servers.pulse]',
      'command = "pulse"',
      '',
      '# env for the old one',
      '[mcp_servers.pulse.env]',
      'A = "1"',
      '',
      '# docs server',
      '[mcp_servers.docs]',
      'command = "docs"',
      '',
    ].join('\n');
    expect(edit(before, true)).toEqual({
      kind: 'write',
      text: `model = "o3"\n${TABLE}\n# docs server\n[mcp_servers.docs]\ncommand = "docs"\n`,
      replaced: 'the "pulse" MCP server without a url',
    });
  });

  it('does not take lines inside a multi-line string for tables', () => {
    const text = 'notes = """\n[mcp_servers.pulse]\nurl = "x"\n"""\n';
    expect(edit(text)).toEqual({ kind: 'write', text: `${text}\n${TABLE}` });
  });

  it('appends to a real Codex config, keeping its comments, arrays of tables and multi-line strings', () => {
    const mine = [
      '# ~/.codex style config, kept in the project',
      'model = "gpt-5-codex"',
      'approval_policy = "on-request" # ask first',
      'instructions = """',
      '[mcp_servers.pulse]',
      'url = "not a table, a line of text"',
      '"""',
      '',
      '[mcp_servers.github]',
      'command = "gh-mcp"',
      'args = [',
      '  "--read-only", # no writes',
      ']',
      'env = { GH_HOST = "github.com" }',
      '',
      '[[profiles.fast.tools]]',
      'name = "search"',
      '',
    ].join('\n');
    expect(edit(mine)).toEqual({ kind: 'write', text: `${mine}\n${TABLE}` });
    expect(edit(`${mine}\n${TABLE}`)).toEqual({ kind: 'unchanged' });
  });

  it('refuses a file that is not valid TOML, saying where, and never edits it', () => {
    for (const text of [
      'model = "o3\n',
      '[mcp_servers.docs]\ncommand = "docs"\n[mcp_servers.docs]\nargs = []\n',
    ]) {
      expect(edit(text)).toMatchObject({
        kind: 'invalid',
        problem: expect.stringMatching(/^is not valid TOML \(.+ at line \d+ column \d+\)$/),
        fix: expect.stringContaining('pulse edits only TOML it can parse'),
      });
    }
  });

  it('refuses forms it cannot append a table to, asking for a hand edit', () => {
    for (const text of [
      'mcp_servers = { docs = { command = "docs" } }\n',
      'mcp_servers.pulse.url = "x"\n',
      '[mcp_servers]\npulse = { command = "pulse" }\n',
    ]) {
      expect(edit(text)).toMatchObject({ kind: 'invalid', fix: expect.stringContaining('by hand') });
      expect(edit(text, true).kind).toBe('invalid');
    }
  });
});
