import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectId } from '../../src/store/project-id.js';
import { connectClient, runCli, startDaemon } from '../support/daemon.js';
import { trackStarted } from '../support/started.js';
import { type ScriptedModel, startAnthropicModel, type Turn, toolCalls } from './anthropic-model.js';
import { inAgentSuite, runClaude } from './claude.js';
import { userEdits } from './cli-process.js';
import type { FunctionCall, Step } from './gemini-model.js';
import { geminiScripted, setUpGemini, trustingHome } from './gemini-project.js';
import { freePort, tempGitProject } from './pulse-project.js';

/*
 * Two different agents in one project with one daemon, at once: the real Gemini CLI and the real
 * Claude Code, each set up by its own `pulse setup … --write`, each with its own scripted model.
 * The user changes the guidance; both are held; Gemini replans and acknowledges, and runs again
 * while Claude Code is still held; then Claude Code acknowledges for itself, and runs.
 */

const started = trackStarted();
const models: ScriptedModel[] = [];

afterEach(async () => {
  await Promise.all(models.splice(0).map((model) => model.close()));
  await started.cleanUp();
});

/** A promise and the function that settles it, to pace one scripted model on the other's steps. */
const signal = () => {
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return { done, resolve };
};

const gemini = (name: string, args: Record<string, unknown> = {}): FunctionCall[] => [{ name, args }];
const claude = (name: string, input: unknown): Turn => [{ type: 'tool_use', name, input }];

/**
 * The event id a held call's reason names ("… call pulse_ack_replan with event_id "evt_…""). With two
 * CLIs starting at once a hook may find pulse's scan still running and hold for that instead (fail
 * closed); its reason names the pending event the same way.
 */
const eventIn = (reason: unknown) => /event_id "([^"]+)"/.exec(String(reason ?? ''))?.[1];

/** The JSON pulse answered with, from the text Gemini hands the model. */
const pulseAnswer = (response: Record<string, unknown> | undefined) =>
  JSON.parse(/\{[\s\S]*\}/.exec(String(response?.output))?.[0] ?? 'null');

describe.skipIf(!inAgentSuite)('Gemini CLI 0.61.0 and Claude Code 2.1.332 in one project', () => {
  it('holds both after a guidance edit; Gemini acknowledges and runs while Claude Code is still held, until it acknowledges too', async () => {
    const project = await realpath(await tempGitProject(started));
    const port = await freePort();
    started.daemons.push(await startDaemon(project, { args: ['--port', String(port)] }));
    await setUpGemini(project, port);
    const claudeSetup = await runCli(['setup', 'claude', '--write', '-p', project, '--port', String(port)]);
    expect(claudeSetup.code, claudeSetup.stdout).toBe(0);
    const home = await trustingHome(started, project);
    // An MCP client of the user's own (an inspector, another editor) that never acts: with it, no
    // agent is tied by elimination, so each is tied by pulse's answer its after-tool hook saw.
    started.clients.push(await connectClient(`http://127.0.0.1:${port}/p/${projectId(project)}/mcp`));

    const geminiCheckedIn = signal();
    const claudeCheckedIn = signal();
    const edited = signal();
    const claudeHeld = signal();
    const geminiWorked = signal();
    let pending = '';
    const g: Record<string, Record<string, unknown> | undefined> = {};
    const touchA = gemini('run_shell_command', { command: 'touch a-file' });
    const geminiSteps: Step[] = [
      () => gemini('mcp_pulse_pulse_should_interrupt'),
      async () => {
        geminiCheckedIn.resolve();
        await claudeCheckedIn.done;
        pending = await userEdits(project, 'guidance.md', '# Guidance\n\nBoth agents: use the new API.\n');
        edited.resolve();
        return touchA;
      },
      async (request) => {
        g.held = request.responseTo('run_shell_command');
        await claudeHeld.done;
        return gemini('read_file', { file_path: '.pulse/guidance.md' });
      },
      () => gemini('write_file', { file_path: '.pulse/plan.md', content: '# Plan\n\nGemini follows.\n' }),
      () => gemini('mcp_pulse_pulse_ack_replan', { event_id: eventIn(g.held?.error) }),
      (request) => {
        g.ack = request.responseTo('mcp_pulse_pulse_ack_replan');
        return touchA;
      },
      (request) => {
        g.work = request.responseTo('run_shell_command');
        geminiWorked.resolve();
        return 'Done.';
      },
    ];
    const touchB = claude('Bash', { command: 'touch b-file', description: 'Create b-file' });
    const claudeModel = await startAnthropicModel({
      script: [
        () => claude('mcp__pulse__pulse_should_interrupt', {}),
        async () => {
          claudeCheckedIn.resolve();
          await edited.done;
          return touchB;
        },
        // Held: it waits until Gemini has acknowledged and run again, then tries once more.
        async () => {
          claudeHeld.resolve();
          await geminiWorked.done;
          return touchB;
        },
        () => claude('Read', { file_path: join(project, '.pulse', 'guidance.md') }),
        () =>
          claude('Write', {
            file_path: join(project, '.pulse', 'plan.md'),
            content: '# Plan\n\nBoth follow.\n',
          }),
        (request) => {
          const held = toolCalls(request).findLast((call) => call.name === 'Bash')?.result;
          return claude('mcp__pulse__pulse_ack_replan', { event_id: eventIn(held) });
        },
        () => touchB,
        () => [{ type: 'text', text: 'Done.' }],
      ],
    });
    models.push(claudeModel);

    const [geminiRun, claudeRun] = await Promise.all([
      geminiScripted(started, { project, home }, geminiSteps, 'Carry on, Gemini.'),
      runClaude({
        project,
        modelUrl: claudeModel.url,
        prompt: 'Carry on, Claude.',
        userSettings: { permissions: { allow: ['Bash(touch b-file)'] } },
      }),
    ]);

    expect(geminiRun.run.code, geminiRun.context).toBe(0);
    expect([geminiRun.model.errors, geminiRun.model.overruns], geminiRun.context).toEqual([[], 0]);
    expect(claudeModel.problems).toEqual([]);
    expect(claudeRun.code).toBe(0);

    // Gemini: held, acknowledged for itself, ran again.
    expect(g.held?.error).toMatch(/^Tool execution blocked: pulse: /);
    expect(g.held?.error).toContain(`call pulse_ack_replan with event_id "${pending}"`);
    const geminiAck = pulseAnswer(g.ack);
    expect(geminiAck).toMatchObject({ accepted: true, acknowledged_event_id: pending });
    expect(g.work?.error).toBeUndefined();
    expect(existsSync(join(project, 'a-file'))).toBe(true);

    // Claude Code: held before Gemini's ack and still held after it; ran only once it acknowledged itself.
    const [check, heldB, stillHeldB, , , ackB, workB] = toolCalls(claudeModel.turns().at(-1)!);
    expect(JSON.parse(check!.result!)).toMatchObject({ needs_replan: false });
    expect(heldB).toMatchObject({ name: 'Bash', isError: true });
    expect(heldB!.result).toContain(`call pulse_ack_replan with event_id "${pending}"`);
    expect(stillHeldB).toMatchObject({ name: 'Bash', isError: true });
    expect(stillHeldB!.result).toContain(`call pulse_ack_replan with event_id "${pending}"`);
    const claudeAck = JSON.parse(ackB!.result!);
    expect(claudeAck).toMatchObject({ accepted: true, acknowledged_event_id: pending });
    expect(claudeAck.agent_id).not.toBe(geminiAck.agent_id);
    expect(workB).toMatchObject({ name: 'Bash', isError: false });
    expect(existsSync(join(project, 'b-file'))).toBe(true);
  });
});
