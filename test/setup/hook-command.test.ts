import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { hookCommand, olderHookCommand, shellQuote } from '../../src/setup/hook-command.js';

describe('the hook command', () => {
  it('quotes paths so that a shell passes them on unchanged, spaces and $ included', () => {
    for (const path of ['/opt/node 20/bin/node', '/home/a$HOME/`x`/"q"/back\\slash', "/it's/fine"]) {
      const echoed = execFileSync('sh', ['-c', `printf %s ${shellQuote(path, 'linux')}`], {
        encoding: 'utf8',
      });
      expect(echoed).toBe(path);
    }
  });

  it('is node, the CLI and `hook <agent> --event <event>`', () => {
    expect(hookCommand('cursor', 'stop', { nodePath: '/n/node', cliPath: '/p/dist/src/bin.cjs' })).toBe(
      '"/n/node" "/p/dist/src/bin.cjs" hook cursor --event stop',
    );
    expect(shellQuote('C:\\Program Files\\node.exe', 'win32')).toBe('"C:\\Program Files\\node.exe"');
  });

  it('knows the command an older setup wrote for the same node and clone: cli.js beside the bin', () => {
    expect(olderHookCommand('claude', 'Stop', { nodePath: '/n/node', cliPath: '/p/dist/src/bin.cjs' })).toBe(
      '"/n/node" "/p/dist/src/cli.js" hook claude --event Stop',
    );
  });
});
