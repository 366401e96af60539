import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackStarted } from '../support/started.js';
import { inAgentSuite } from './claude.js';
import { claudeBeside, eventIn } from './claude-beside.js';
import { userEdits } from './cli-process.js';
import type { FunctionCall, Step } from './gemini-model.js';
import { geminiScripted, trustingHome } from './gemini-project.js';
import { pulseProjectFor } from './pulse-project.js';

/*
 * Two different agents in one project with one daemon, at once: the real Gemini CLI and the real
 * Claude Code, each set up by its own `pulse setup … --write`, each with its own scripted model.
 * The user changes the guidance; both are held; Gemini replans and acknowledges, and runs again
 * while Claude Code is still held; then Claude Code acknowledges for itself, and runs.
 */

const started = trackStarted();

afterEach(() => started.cleanUp());

const gemini = (name: string, args: Record<string, unknown> = {}): FunctionCall[] => [{ name, args }];

/** The JSON pulse answered with, from the text Gemini hands the model. */
const pulseAnswer = (response: Record<string, unknown> | undefined) =>
  JSON.parse(/\{[\s\S]*\}/.exec(String(response?.output))?.[0] ?? 'null');

describe.skipIf(!inAgentSuite)('Gemini CLI 0.61.0 and Claude Code 2.1.332 in one project', () => {
  it('holds both after a guidance edit; Gemini acknowledges and runs while Claude Code is still held, until it acknowledges too', async () => {
    const scene = await pulseProjectFor(started, 'gemini');
    const { project } = scene;
    const claude = await claudeBeside(started, scene);
    const home = await trustingHome(started, project);

    let pending = '';
    const g: Record<string, Record<string, unknown> | undefined> = {};
    const touchA = gemini('run_shell_command', { command: 'touch a-file' });
    const geminiSteps: Step[] = [
      () => gemini('mcp_pulse_pulse_should_interrupt'),
      async () => {
        await claude.checkedIn;
        pending = await userEdits(project, 'guidance.md', '# Guidance\n\nBoth agents: use the new API.\n');
        claude.edited(pending);
        return touchA;
      },
      async (request) => {
        g.held = request.responseTo('run_shell_command');
        await claude.held;
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
        claude.otherWorked();
        return 'Done.';
      },
    ];

    const [geminiRun, claudeRun] = await Promise.all([
      geminiScripted(started, { project, home }, geminiSteps, 'Carry on, Gemini.'),
      claude.run(),
    ]);

    expect(geminiRun.run.code, geminiRun.context).toBe(0);
    expect([geminiRun.model.errors, geminiRun.model.overruns], geminiRun.context).toEqual([[], 0]);
    expect(claudeRun.code).toBe(0);

    // Gemini: held, acknowledged for itself, ran again.
    expect(g.held?.error).toMatch(/^Tool execution blocked: pulse: /);
    expect(g.held?.error).toContain(`call pulse_ack_replan with event_id "${pending}"`);
    const geminiAck = pulseAnswer(g.ack);
    expect(geminiAck).toMatchObject({ accepted: true, acknowledged_event_id: pending });
    expect(g.work?.error).toBeUndefined();
    expect(existsSync(join(project, 'a-file'))).toBe(true);

    // Claude Code: held before Gemini's ack and still held after it; ran only once it acknowledged itself.
    claude.expectHeldUntilItsOwnAck(geminiAck.agent_id);
  });
});
