import { describe, expect, it } from 'vitest';
import { runCli } from '../support/daemon.js';

describe('pulse --version and --help', () => {
  it('prints pulse-agent and the package version', async () => {
    const { code, stdout } = await runCli(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^pulse-agent \d+\.\d+\.\d+$/);
  });

  it('lists the commands in --help, and each command has its own --help', async () => {
    const top = await runCli(['--help']);
    expect(top.code).toBe(0);
    for (const command of ['start', 'init', 'status']) expect(top.stdout).toContain(command);
    const start = await runCli(['start', '--help']);
    expect(start.stdout).toContain('--project');
    expect(start.stdout).toContain('--port');
  });
});
