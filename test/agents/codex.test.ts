import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/doctor/doctor-command.js';
import { readEvents, runCli, startDaemon, tempProject } from '../helpers/daemon.js';
import { trackStarted } from '../helpers/started.js';
import { type CodexHome, codexConfig, makeCodexHome, runCodexExec } from './codex.js';
import { listHooks, reviewHooks, trustProject } from './codex-trust.js';
import { type FunctionCall, type ModelRequest, startScriptedModel, type Turn } from './openai-model.js';

/*
 * The real Codex CLI (0.171.0, `codex exec`) in a project set up by `pulse setup codex --write`,
 * beside a real `pulse start`; only the model is scripted. The user has trusted the project and
 * reviewed its hooks, as Codex asks before it runs either.
 */

const started = trackStarted();
const homes: CodexHome[] = [];

afterEach(async () => {
  await Promise.all(homes.splice(0).map((home) => home.remove()));
  await started.cleanUp();
});

/** A call of one of pulse's MCP tools, as Codex offers them: function `<tool>` in namespace `mcp__pulse`. */
const pulseTool = (name: string, args: Record<string, unknown> = {}, call_id?: string): FunctionCall => ({
  type: 'function_call',
  namespace: 'mcp__pulse',
  name,
  arguments: args,
  ...(call_id === undefined ? {} : { call_id }),
});

/** Codex's shell tool (`exec_command`), the one the model is offered for commands. */
const shell = (cmd: string, call_id: string): FunctionCall => ({
  type: 'function_call',
  name: 'exec_command',
  arguments: { cmd },
  call_id,
});

describe.skipIf(!process.env.PULSE_AGENT_SUITE)('pulse with the real Codex CLI (codex exec)', () => {
  it('holds a shell command while a replan is pending, runs reads, the plan edit and the ack, then the command', async () => {
    const project = await realpath(await tempProject('pulse-codex-'));
    started.projects.push(project);
    execFileSync('git', ['init', '-q', project]);
    const daemon = await startDaemon(project);
    started.daemons.push(daemon);
    const setup = await runCli(['setup', 'codex', '--write', '-p', project, '--port', String(daemon.port)]);
    expect(setup.code, setup.stderr).toBe(0);

    // What the model saw after each step, by call id, and the event id it picked up from a hold.
    const outputs: Record<string, string | undefined> = {};
    let eventId = '';
    const saw = (request: ModelRequest, callId: string) => {
      outputs[callId] = request.outputOf(callId);
      return outputs[callId];
    };
    const guidance = '# Guidance\n\nUse the new API everywhere.\n';
    const steps: Array<(request: ModelRequest) => Turn | Promise<Turn>> = [
      () => [pulseTool('pulse_should_interrupt', {}, 'check-in')],
      async (request) => {
        saw(request, 'check-in');
        await writeFile(join(project, '.pulse', 'guidance.md'), guidance); // the user changes their mind
        return [shell('touch src-file', 'touch-held')];
      },
      (request) => {
        eventId = /event (\S+?)[;)]/.exec(saw(request, 'touch-held') ?? '')?.[1] ?? '';
        return [shell('cat .pulse/guidance.md', 'read-guidance')];
      },
      async (request) => {
        saw(request, 'read-guidance');
        const last = (await readFile(join(project, '.pulse', 'plan.md'), 'utf8')).trimEnd().split('\n').pop();
        const patch = `*** Begin Patch\n*** Update File: .pulse/plan.md\n@@\n ${last}\n+\n+- Follow the new guidance: use the new API.\n*** End Patch\n`;
        return [{ type: 'custom_tool_call', name: 'apply_patch', input: patch, call_id: 'plan-edit' }];
      },
      (request) => {
        saw(request, 'plan-edit');
        return [pulseTool('pulse_ack_replan', { event_id: eventId }, 'ack')];
      },
      (request) => {
        saw(request, 'ack');
        return [shell('touch src-file', 'touch-again')];
      },
      (request) => {
        saw(request, 'touch-again');
        return 'Done: the plan follows the new guidance.';
      },
    ];
    const model = await startScriptedModel(steps);
    started.streams.push({ close: () => void model.close() });
    const home = await makeCodexHome(codexConfig(model.baseUrl));
    homes.push(home);
    await trustProject(home, project);
    const reviewed = await reviewHooks(home, project);
    expect(reviewed.map((hook) => hook.eventName).sort()).toEqual(
      ['postToolUse', 'preToolUse', 'sessionStart', 'stop', 'userPromptSubmit'].sort(),
    );

    // What a careful unattended user runs: `codex exec` asks no one (approval "never" is its
    // default) and may write only inside the project.
    const run = await runCodexExec({
      cwd: project,
      home,
      prompt: 'Add src-file to the project.',
      args: ['--sandbox', 'workspace-write'],
    });
    const context = `codex exec exited ${run.code}\n${run.stderr}\n${JSON.stringify(outputs, null, 2)}`;
    expect(run.timedOut, context).toBe(false);
    expect(model.errors, context).toEqual([]);

    const guidanceEvent = (await readEvents(project)).findLast((event) => event.path.endsWith('guidance.md'));
    expect.soft(outputs['check-in'], 'pulse_should_interrupt ran').toContain('"needs_replan":false');
    expect
      .soft(outputs['touch-held'], 'touch held by the PreToolUse hook')
      .toContain(`pulse: a replan is pending (event ${guidanceEvent?.id}`);
    expect
      .soft(outputs['read-guidance'], 'a read runs while pending')
      .toContain('Use the new API everywhere.');
    expect.soft(outputs['plan-edit'], 'editing .pulse/plan.md runs while pending').toContain('Success.');
    expect.soft(outputs.ack, 'pulse_ack_replan accepted').toContain('"accepted":true');
    expect.soft(outputs['touch-again'], 'touch runs after the ack').toContain('Process exited with code 0');
    expect.soft(existsSync(join(project, 'src-file')), 'src-file exists').toBe(true);
    expect.soft(model.overruns, 'no turn past the script (a stop held again)').toBe(0);
    expect(run.code, context).toBe(0);
  });
  it('pulse doctor and pulse setup say what Codex itself says of trust and hook review, at each step', async () => {
    const project = await realpath(await tempProject('pulse-codex-gates-'));
    started.projects.push(project);
    execFileSync('git', ['init', '-q', project]);
    const daemon = await startDaemon(project);
    started.daemons.push(daemon);
    const home = await makeCodexHome(codexConfig('http://127.0.0.1:9/v1'));
    homes.push(home);
    const env = { CODEX_HOME: home.codexHome };
    const setup = (...args: string[]) =>
      runCli(['setup', 'codex', '--write', '-p', project, '--port', String(daemon.port), ...args], { env });
    /** What pulse doctor says of Codex, and what Codex's own app server says of pulse's hooks. */
    const both = async () => {
      const { stdout } = await runCli(['doctor', '-p', project, '--json'], { env });
      const codex = (JSON.parse(stdout) as DoctorReport).findings.filter(
        (f) => f.subject === 'codex' && !f.message.startsWith('set up for port'),
      );
      const listed = await listHooks(home, project);
      return { codex, listed: Object.fromEntries(listed.map((hook) => [hook.eventName, hook.trustStatus])) };
    };

    const first = await setup();
    expect(first.code, first.stdout).toBe(0);
    expect(first.stdout).toContain(`Codex does not trust ${project} yet`);
    let now = await both();
    // Untrusted: Codex lists none of the project's hooks at all.
    expect(now.listed).toEqual({});
    expect(now.codex).toEqual([
      expect.objectContaining({ ok: false, message: expect.stringContaining('does not trust') }),
    ]);

    await trustProject(home, project);
    now = await both();
    const EVENTS = ['sessionStart', 'userPromptSubmit', 'preToolUse', 'postToolUse', 'stop'];
    expect(now.listed).toEqual(Object.fromEntries(EVENTS.map((event) => [event, 'untrusted'])));
    expect(now.codex).toEqual([
      expect.objectContaining({
        ok: false,
        message: expect.stringMatching(
          /^Codex will not run 5 of pulse's hooks until you review them: SessionStart \(new\), .*skips them without a word/,
        ),
        fix: expect.stringContaining('"Trust all and continue"'),
      }),
    ]);

    await reviewHooks(home, project);
    now = await both();
    expect(now.listed).toEqual(Object.fromEntries(EVENTS.map((event) => [event, 'trusted'])));
    expect(now.codex).toEqual([
      {
        subject: 'codex',
        ok: true,
        message: `Codex trusts ${project} and will run pulse's 5 reviewed hooks`,
      },
    ]);
    const rerun = await setup();
    expect(rerun.stdout).toContain('Already set up');
    expect(rerun.stdout).not.toContain('will not use all of this yet');

    // Hooks for another transport are other commands: Codex wants them reviewed again, and both say so.
    const moved = await setup('--hooks', 'node');
    expect(moved.code, moved.stdout).toBe(0);
    expect(moved.stdout).toContain('Codex will not run 5 of pulse');
    now = await both();
    expect(now.listed).toEqual(Object.fromEntries(EVENTS.map((event) => [event, 'modified'])));
    expect(now.codex[0]!.message).toContain('PreToolUse (changed since review)');
  });
});
