import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackStarted } from '../support/started.js';
import {
  type ScriptedModel,
  type Step,
  startAnthropicModel,
  type Turn,
  toolCalls,
} from './anthropic-model.js';
import { inAgentSuite, runClaude } from './claude.js';
import { userEdits } from './cli-process.js';
import { pulseProjectForClaude } from './pulse-project.js';

/*
 * Two real Claude Code sessions in one project at once, each with its own scripted model: agent A
 * replans and acknowledges a guidance change; agent B, which was working too, is still held until
 * it acknowledges the change itself.
 */

const started = trackStarted();
const models: ScriptedModel[] = [];

afterEach(async () => {
  await Promise.all(models.splice(0).map((model) => model.close()));
  await started.cleanUp();
});

const use = (name: string, input: unknown): Turn => [{ type: 'tool_use', name, input }];
const say = (text: string): Turn => [{ type: 'text', text }];

/** A promise and the function that settles it, to pace one scripted model on the other's steps. */
const signal = () => {
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return { done, resolve };
};

/** The steps of an agent that replans: read the change, write its plan, ack the event its held call named, run again. */
const replanSteps = (project: string, name: string, touch: Turn, after: () => void): Step[] => [
  () => use('Read', { file_path: join(project, '.pulse', 'guidance.md') }),
  () =>
    use('Write', { file_path: join(project, '.pulse', 'plan.md'), content: `# Plan\n\n${name} follows.\n` }),
  (request) => {
    const held = toolCalls(request).findLast((call) => call.name === 'Bash')?.result ?? '';
    return use('mcp__pulse__pulse_ack_replan', { event_id: /event_id "([^"]+)"/.exec(held)?.[1] });
  },
  () => touch,
  () => {
    after();
    return say('Done.');
  },
];

describe.skipIf(!inAgentSuite)('two Claude Code 2.1.332 sessions in one project', () => {
  it("holds agent B after agent A's ack, until B replans and acknowledges itself", async () => {
    const { project } = await pulseProjectForClaude(started);
    const bCheckedIn = signal();
    const aAcked = signal();
    let pending = '';
    const touchA = use('Bash', { command: 'touch a-file', description: 'Create a-file' });
    const touchB = use('Bash', { command: 'touch b-file', description: 'Create b-file' });
    const modelA = await startAnthropicModel({
      script: [
        () => use('mcp__pulse__pulse_should_interrupt', {}),
        async () => {
          await bCheckedIn.done;
          pending = await userEdits(project, 'guidance.md', '# Guidance\n\nBoth agents: use the new API.\n');
          return touchA;
        },
        ...replanSteps(project, 'A', touchA, aAcked.resolve),
      ],
    });
    const modelB = await startAnthropicModel({
      script: [
        () => use('mcp__pulse__pulse_should_interrupt', {}),
        async () => {
          bCheckedIn.resolve();
          await aAcked.done;
          return touchB;
        },
        ...replanSteps(project, 'B', touchB, () => undefined),
      ],
    });
    models.push(modelA, modelB);
    const userSettings = { permissions: { allow: ['Bash(touch a-file)', 'Bash(touch b-file)'] } };

    const [runA, runB] = await Promise.all([
      runClaude({ project, modelUrl: modelA.url, prompt: 'Carry on, A.', userSettings }),
      runClaude({ project, modelUrl: modelB.url, prompt: 'Carry on, B.', userSettings }),
    ]);

    expect(modelA.problems).toEqual([]);
    expect(modelB.problems).toEqual([]);
    const [, heldA, , , ackA, workA] = toolCalls(modelA.turns().at(-1)!);
    expect(heldA).toMatchObject({ name: 'Bash', isError: true });
    expect(heldA!.result).toContain(pending);
    expect(JSON.parse(ackA!.result!)).toMatchObject({ accepted: true, acknowledged_event_id: pending });
    expect(workA).toMatchObject({ name: 'Bash', isError: false });

    // B checked in before the change and ran nothing since: A's ack did not free it.
    const [checkB, heldB, , , ackB, workB] = toolCalls(modelB.turns().at(-1)!);
    expect(JSON.parse(checkB!.result!)).toMatchObject({ needs_replan: false });
    expect(heldB).toMatchObject({ name: 'Bash', isError: true });
    expect(heldB!.result).toContain(`pulse: a replan is pending (event ${pending}`);
    expect(JSON.parse(ackB!.result!)).toMatchObject({ accepted: true, acknowledged_event_id: pending });
    expect(JSON.parse(ackB!.result!).agent_id).not.toBe(JSON.parse(ackA!.result!).agent_id);
    expect(workB).toMatchObject({ name: 'Bash', isError: false });
    expect(existsSync(join(project, 'a-file')) && existsSync(join(project, 'b-file'))).toBe(true);
    expect([runA.code, runB.code]).toEqual([0, 0]);
  });
});
