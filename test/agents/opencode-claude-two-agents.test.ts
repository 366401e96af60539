import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackStarted } from '../support/started.js';
import type { Step } from './chat-model.js';
import { inAgentSuite } from './claude.js';
import { claudeBeside, eventIn } from './claude-beside.js';
import { userEdits } from './cli-process.js';
import { OPENCODE_VERSION } from './opencode.js';
import { runScripted, setUpProject } from './opencode-project.js';
import { toolCall } from './smoke-scene.js';

/*
 * Two different agents in one project with one daemon, at once: the real opencode (`opencode run`)
 * and the real Claude Code, each set up by its own `pulse setup … --write`, each with its own
 * scripted model. The user changes the guidance; both are held; opencode replans and acknowledges,
 * and runs again while Claude Code is still held; then Claude Code acknowledges for itself, and runs.
 */

const started = trackStarted();

afterEach(() => started.cleanUp());

/** `touch a-file`, the call opencode is held at and then runs, under the id its output is read by. */
const touchA = (id: string) => [
  toolCall('bash', { command: 'touch a-file', description: 'Create a-file' }, id),
];

describe.skipIf(!inAgentSuite)(`opencode ${OPENCODE_VERSION} and Claude Code 2.1.332 in one project`, () => {
  it('holds both after a guidance edit; opencode acknowledges and runs while Claude Code is still held, until it acknowledges too', async () => {
    const scene = await setUpProject(started, 'pulse-opencode-claude-');
    const { project } = scene;
    const claude = await claudeBeside(started, scene);

    let pending = '';
    const o: Record<string, string | undefined> = {};
    const steps: Step[] = [
      () => [toolCall('pulse_pulse_should_interrupt', {}, 'check-in')],
      async () => {
        await claude.checkedIn;
        pending = await userEdits(project, 'guidance.md', '# Guidance\n\nBoth agents: use the new API.\n');
        claude.edited(pending);
        return touchA('touch-held');
      },
      async (request) => {
        o.held = request.outputOf('touch-held');
        await claude.held;
        return [toolCall('read', { filePath: join(project, '.pulse', 'guidance.md') }, 'read')];
      },
      () => [
        toolCall(
          'write',
          { filePath: join(project, '.pulse', 'plan.md'), content: '# Plan\n\nopencode follows.\n' },
          'plan',
        ),
      ],
      () => [toolCall('pulse_pulse_ack_replan', { event_id: eventIn(o.held) }, 'ack')],
      (request) => {
        o.ack = request.outputOf('ack');
        return touchA('touch-again');
      },
      (request) => {
        o.work = request.outputOf('touch-again');
        claude.otherWorked();
        return 'Done.';
      },
    ];

    const [opencodeRun, claudeRun] = await Promise.all([
      runScripted(started, project, steps, 'Carry on, opencode.'),
      claude.run(),
    ]);

    const details = `${opencodeRun.context}\n${JSON.stringify(o, null, 2)}`;
    expect(opencodeRun.run.code, details).toBe(0);
    expect([opencodeRun.model.errors, opencodeRun.model.overruns], details).toEqual([[], 0]);
    expect(claudeRun.code).toBe(0);

    // opencode: held, acknowledged for itself, ran again.
    expect(o.held, details).toContain('pulse: a replan is pending');
    expect(o.held).toContain(`call pulse_ack_replan with event_id "${pending}"`);
    expect(o.ack, details).toContain('"accepted":true');
    const opencodeAck = JSON.parse(o.ack ?? 'null');
    expect(opencodeAck, details).toMatchObject({ accepted: true, acknowledged_event_id: pending });
    expect(o.work, details).not.toContain('pulse:');
    expect(existsSync(join(project, 'a-file'))).toBe(true);

    // Claude Code: held before opencode's ack and still held after it; ran only once it acknowledged itself.
    claude.expectHeldUntilItsOwnAck(opencodeAck.agent_id);
  });
});
