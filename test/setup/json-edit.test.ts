import { describe, expect, it } from 'vitest';
import type { EditOptions } from '../../src/setup/file-edit.js';
import { type JsonChange, jsonEdit, parseJsonObject } from '../../src/setup/json-edit.js';
import { mcpServerChange } from '../../src/setup/mcp-entry.js';

const URL = 'http://127.0.0.1:8765/mcp';
const options: EditOptions = { force: false, forceCommand: 'pulse setup vscode --write --force' };
const addPulse = (serversKey: string, text: string | null, force = false) =>
  jsonEdit(mcpServerChange(serversKey, { type: 'http', url: URL }))(text, { ...options, force });
const edit = (change: JsonChange, text: string) => jsonEdit(change)(text, options);

describe('editing a JSON file the user wrote', () => {
  it("adds pulse to VS Code's mcp.json keeping its comments, its compact entry and its trailing comma", () => {
    const mine = [
      '{',
      '  // Servers for this workspace; see https://code.visualstudio.com/docs/copilot/chat/mcp-servers',
      '  "servers": {',
      '    "github": {"command": "gh-mcp", "args": ["--read-only"]}, // ours',
      '  },',
      '  /* inputs asked once per session */',
      '  "inputs": [],',
      '}',
      '',
    ].join('\n');
    expect(addPulse('servers', mine)).toEqual({
      kind: 'write',
      text: [
        '{',
        '  // Servers for this workspace; see https://code.visualstudio.com/docs/copilot/chat/mcp-servers',
        '  "servers": {',
        '    "github": {"command": "gh-mcp", "args": ["--read-only"]}, // ours',
        '    "pulse": {',
        '      "type": "http",',
        `      "url": "${URL}"`,
        '    },',
        '  },',
        '  /* inputs asked once per session */',
        '  "inputs": [],',
        '}',
        '',
      ].join('\n'),
    });
  });

  it("adds a comma after the last entry, not after its comment, in the user's tabs and line endings", () => {
    const mine =
      '{\r\n\t"mcpServers": {\r\n\t\t"docs": {\r\n\t\t\t"url": "http://localhost:9000/mcp"\r\n\t\t} // docs\r\n\t}\r\n}';
    expect(addPulse('mcpServers', mine)).toEqual({
      kind: 'write',
      text: `{\r\n\t"mcpServers": {\r\n\t\t"docs": {\r\n\t\t\t"url": "http://localhost:9000/mcp"\r\n\t\t}, // docs\r\n\t\t"pulse": {\r\n\t\t\t"type": "http",\r\n\t\t\t"url": "${URL}"\r\n\t\t}\r\n\t}\r\n}`,
    });
  });

  it('adds the servers object to a file without one, and fills an empty one on lines of its own', () => {
    const entry = `{\n    "pulse": {\n      "type": "http",\n      "url": "${URL}"\n    }\n  }`;
    expect(addPulse('servers', '{\n  "inputs": []\n}\n')).toEqual({
      kind: 'write',
      text: `{\n  "inputs": [],\n  "servers": ${entry}\n}\n`,
    });
    expect(addPulse('servers', '{\n  "servers": {}\n}\n')).toEqual({
      kind: 'write',
      text: `{\n  "servers": ${entry}\n}\n`,
    });
    expect(addPulse('servers', '{\n  "servers": {\n    // none yet\n  }\n}\n')).toEqual({
      kind: 'write',
      text: `{\n  "servers": {\n    // none yet\n    "pulse": {\n      "type": "http",\n      "url": "${URL}"\n    }\n  }\n}\n`,
    });
    expect(addPulse('servers', '{}')).toEqual({
      kind: 'write',
      text: `{\n  "servers": ${entry}\n}`,
    });
  });

  it('keeps a one-line servers object on one line', () => {
    expect(addPulse('mcpServers', '{"mcpServers": {"docs": {"command": "docs"}}}\n')).toEqual({
      kind: 'write',
      text: `{"mcpServers": {"docs": {"command": "docs"}, "pulse": {"type": "http", "url": "${URL}"}}}\n`,
    });
  });

  it("replaces only what differs in the old pulse entry with --force, leaving the user's other entries byte for byte", () => {
    const mine =
      '{\n  "servers": {\n    "pulse": {"url": "http://127.0.0.1:9999/mcp"}, // old\n    "docs": {"command": "docs"}\n  }\n}\n';
    expect(addPulse('servers', mine)).toMatchObject({ kind: 'conflict' });
    expect(addPulse('servers', mine, true)).toEqual({
      kind: 'write',
      text: `{\n  "servers": {\n    "pulse": {"url": "${URL}", "type": "http"}, // old\n    "docs": {"command": "docs"}\n  }\n}\n`,
      replaced: 'the "pulse" MCP server at http://127.0.0.1:9999/mcp',
    });
  });

  it('appends to an array and removes a key in place, keeping the comments around them', () => {
    const settings = [
      '{',
      '  "permissions": {',
      '    // what Claude may run unasked',
      '    "allow": [',
      '      "Bash(npm test)", // tests',
      '    ],',
      '    "deny": ["Read(.env)"]',
      '  },',
      '  "model": "opus" /* pinned */',
      '}',
      '',
    ].join('\n');
    const change: JsonChange = (doc) => {
      const permissions = doc.permissions as { allow: string[]; deny?: string[] };
      permissions.allow.push('mcp__pulse');
      delete permissions.deny;
      return { kind: 'changed' };
    };
    expect(edit(change, settings)).toEqual({
      kind: 'write',
      text: [
        '{',
        '  "permissions": {',
        '    // what Claude may run unasked',
        '    "allow": [',
        '      "Bash(npm test)", // tests',
        '      "mcp__pulse",',
        '    ]',
        '  },',
        '  "model": "opus" /* pinned */',
        '}',
        '',
      ].join('\n'),
    });
  });

  it('answers unchanged when pulse is there already, comments or not', () => {
    expect(
      addPulse('servers', `{\n  // mine\n  "servers": {"pulse": {"type": "http", "url": "${URL}"}}\n}\n`),
    ).toEqual({
      kind: 'unchanged',
    });
  });

  it('writes a new file in two spaces, and refuses one that is not JSON or not an object, naming where', () => {
    expect(addPulse('servers', null)).toEqual({
      kind: 'write',
      text: `{\n  "servers": {\n    "pulse": {\n      "type": "http",\n      "url": "${URL}"\n    }\n  }\n}\n`,
    });
    expect(addPulse('servers', '{"hooks": {')).toMatchObject({
      kind: 'invalid',
      problem: 'is not valid JSON (CloseBraceExpected at line 1 column 12)',
    });
    expect(addPulse('servers', '[1, 2]')).toMatchObject({
      kind: 'invalid',
      problem: 'is JSON, but not an object',
    });
    expect(parseJsonObject('{\n  "a": 1,\n  "b": 2,, \n}')).toEqual({
      problem: 'is not valid JSON (PropertyNameExpected at line 3 column 10)',
    });
  });
});
