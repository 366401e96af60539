import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { holdsCall } from '../../harness/hook-answers.js';
import { curlHookCommand } from '../../src/setup/hook-handlers.js';
import { BIN, callTool, connectClient, startDaemon, tempProject } from '../support/daemon.js';
import { save } from '../support/files.js';
import { runNode, runProgram } from '../support/processes.js';
import { SHELL_SHAPES } from '../support/shell-shapes.js';
import { trackStarted } from '../support/started.js';

/*
 * The pathological shell commands of issue 32 against a spawned daemon over real HTTP, as Claude
 * Code's hooks send them: `pulse hook claude` and the curl line `pulse setup` writes. Before the
 * judge was bounded, `cat {a,{a,…` of 6,000 characters took it 3–7 s, and a held agent's next hook
 * got "the daemon did not answer within 8 s … not enforcing replans".
 */

const started = trackStarted();
afterEach(started.cleanUp);

/** Generous against the hook's own 8 s: an answer takes a process start and milliseconds of judging. */
const BUDGET_MS = 6000;

const bashInput = (project: string, command: string) =>
  JSON.stringify({
    session_id: 'session-1',
    cwd: project,
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command },
  });

/** Runs a shell line with `input` on its stdin: what it printed, and how long it took. */
const runShell = async (line: string, input: string) => {
  const begun = Date.now();
  const { stdout, stderr } = await runProgram('sh', ['-c', line], { input });
  return { stdout, stderr, ms: Date.now() - begun };
};

const pendingProject = async () => {
  const project = await tempProject('pulse-judge-bounds-');
  started.projects.push(project);
  const daemon = await startDaemon(project);
  started.daemons.push(daemon);
  const client = await connectClient(daemon.url);
  started.clients.push(client);
  await save(join(project, '.pulse', 'guidance.md'), '# Guidance\n\nUse the new API; drop the old one.\n');
  const { pending_replan_event_id: eventId } = await callTool<{ pending_replan_event_id: string }>(
    client,
    'pulse_should_interrupt',
  );
  expect(eventId).toMatch(/^evt_/);
  return { project, daemon, eventId };
};

describe('pathological shell commands, a replan pending, over real HTTP', () => {
  it('answers each 6,000-character shape through pulse hook claude in time, holding its write', async () => {
    const { project, eventId } = await pendingProject();
    for (const { name, line } of SHELL_SHAPES) {
      for (const command of [line(6000), `rm -rf build ${line(6000)}`]) {
        const begun = Date.now();
        const { code, stdout, stderr } = await runNode(BIN, ['hook', 'claude', '--event', 'PreToolUse'], {
          input: bashInput(project, command),
        });
        const ms = Date.now() - begun;
        expect(code, stderr).toBe(0);
        // Never the fail-open line: the daemon answered.
        expect(`${stdout}${stderr}`, name).not.toContain('not enforcing replans');
        expect(ms, name).toBeLessThan(BUDGET_MS);
        if (command.startsWith('rm '))
          expect(holdsCall('claude', stdout, eventId), `${name}: ${stdout}`).toBe(true);
      }
    }
  }, 120_000);

  it('answers the same through the curl line setup writes, and holds an input over 1 MiB unread', async () => {
    const { project, daemon, eventId } = await pendingProject();
    const line = curlHookCommand('claude', 'PreToolUse', { port: daemon.port, project, pulse: 'pulse' });
    for (const { name, line: shape } of SHELL_SHAPES) {
      const answer = await runShell(line, bashInput(project, `rm -rf build ${shape(6000)}`));
      expect(answer.stderr, name).toBe('');
      expect(answer.ms, name).toBeLessThan(BUDGET_MS);
      expect(holdsCall('claude', answer.stdout, eventId), `${name}: ${answer.stdout}`).toBe(true);
    }
    const huge = await runShell(line, bashInput(project, `rm -rf build ${'a'.repeat(2 << 20)}`));
    expect(huge.stderr).toBe('');
    expect(huge.ms).toBeLessThan(BUDGET_MS);
    expect(holdsCall('claude', huge.stdout, eventId), huge.stdout).toBe(true);
  }, 120_000);
});
