import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pulseRunning } from '../support/cli-running.js';
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
 * it acknowledges the change itself. And the user's half: `pulse guide --wait` steers both and
 * prints each ack as it comes, one without a plan change, one with its diff.
 */

const started = trackStarted();
const models: ScriptedModel[] = [];

afterEach(async () => {
  await Promise.all(models.splice(0).map((model) => model.close()));
  await started.cleanUp();
});

const use = (name: string, input: unknown): Turn => [{ type: 'tool_use', name, input }];
const say = (text: string): Turn => [{ type: 'text', text }];

/** A promise and the function that settles it, to pace one scripted model on the other's steps (or the user's). */
const signal = () => {
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return { done, resolve };
};

/** The event id the held Bash call's refusal named. */
const heldEvent: Step = (request) => {
  const held = toolCalls(request).findLast((call) => call.name === 'Bash')?.result ?? '';
  return use('mcp__pulse__pulse_ack_replan', { event_id: /event_id "([^"]+)"/.exec(held)?.[1] });
};

/** The steps of an agent that replans: read the change, write its plan, ack the event its held call named, run again. */
const replanSteps = (project: string, name: string, touch: Turn, after: () => void): Step[] => [
  () => use('Read', { file_path: join(project, '.pulse', 'guidance.md') }),
  () =>
    use('Write', { file_path: join(project, '.pulse', 'plan.md'), content: `# Plan\n\n${name} follows.\n` }),
  heldEvent,
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

describe.skipIf(!inAgentSuite)('pulse guide --wait steering two Claude Code 2.1.332 sessions', () => {
  it('prints each session’s ack as it comes, one without a plan change, one with its diff, and exits 0', async () => {
    const { project } = await pulseProjectForClaude(started);
    await writeFile(join(project, '.pulse', 'plan.md'), '# Plan\n\n1. Rewrite the parser\n2. Ship it\n');
    const aIn = signal();
    const bIn = signal();
    const guided = signal();
    const bAcked = signal();
    const touchA = use('Bash', { command: 'touch a-file', description: 'Create a-file' });
    const touchB = use('Bash', { command: 'touch b-file', description: 'Create b-file' });
    const readGuidance = () => use('Read', { file_path: join(project, '.pulse', 'guidance.md') });
    const modelA = await startAnthropicModel({
      script: [
        () => use('mcp__pulse__pulse_should_interrupt', {}),
        async () => {
          aIn.resolve();
          await guided.done;
          return touchA;
        },
        async () => {
          await bAcked.done;
          return readGuidance();
        },
        () =>
          use('Write', {
            file_path: join(project, '.pulse', 'plan.md'),
            content: '# Plan\n\n1. Patch the parser only\n2. Ship it\n',
          }),
        heldEvent,
        () => touchA,
        () => say('Done.'),
      ],
    });
    const modelB = await startAnthropicModel({
      script: [
        () => use('mcp__pulse__pulse_should_interrupt', {}),
        async () => {
          bIn.resolve();
          await guided.done;
          return touchB;
        },
        readGuidance,
        heldEvent,
        () => {
          bAcked.resolve();
          return touchB;
        },
        () => say('Done.'),
      ],
    });
    models.push(modelA, modelB);
    const userSettings = { permissions: { allow: ['Bash(touch a-file)', 'Bash(touch b-file)'] } };
    const runs = Promise.all([
      runClaude({ project, modelUrl: modelA.url, prompt: 'Carry on, A.', userSettings }),
      runClaude({ project, modelUrl: modelB.url, prompt: 'Carry on, B.', userSettings }),
    ]);

    // Both sessions are at work; the user steers them from another terminal.
    await Promise.all([aIn.done, bIn.done]);
    const guide = pulseRunning(started, ['guide', 'Patch the parser only.', '-p', project, '--wait']);
    await guide.printed(/must now replan/, 30_000);
    guided.resolve();
    const [runA, runB] = await runs;
    expect(await guide.exited).toBe(0);
    const output = guide.output();
    if (process.env.PULSE_TRANSCRIPTS_DIR) {
      await mkdir(process.env.PULSE_TRANSCRIPTS_DIR, { recursive: true });
      await writeFile(join(process.env.PULSE_TRANSCRIPTS_DIR, 'guide-wait-two-claude-code.txt'), output);
    }

    expect(modelA.problems).toEqual([]);
    expect(modelB.problems).toEqual([]);
    const event = /logged as (evt_\S+)\./.exec(output)![1]!;
    const session =
      'Claude Code \\S+ \\((hook session [0-9a-f]{8}…, session [0-9a-f]{8}…|session [0-9a-f]{8}…, hook session [0-9a-f]{8}…)\\)';
    expect(output).toMatch(
      new RegExp(
        `^2 agents must now replan and acknowledge ${event}; each is held at its next tool call`,
        'm',
      ),
    );
    expect(output.match(new RegExp(`^  owes it: ${session}$`, 'gm'))).toHaveLength(2);
    const acks = output.split('\n').filter((line) => new RegExp(`^${session} acknowledged`).test(line));
    expect(acks).toEqual([
      expect.stringMatching(
        new RegExp(`^${session} acknowledged ${event} (?:at once|after \\d+s) without changing the plan$`),
      ),
      expect.stringMatching(
        new RegExp(
          `^${session} acknowledged ${event} (?:at once|after \\d+s): the plan changed: 1 line added, 1 removed$`,
        ),
      ),
    ]);
    expect(output).toContain(
      [
        '    --- plan.md at the change',
        '    +++ plan.md at the ack',
        '    @@ -1,4 +1,4 @@',
        '     # Plan',
        '     ',
        '    -1. Rewrite the parser',
        '    +1. Patch the parser only',
        '     2. Ship it',
      ].join('\n'),
    );
    expect(output.trimEnd().split('\n').at(-1)).toBe(`Every agent has acknowledged ${event}.`);
    // Each session was held at its next tool call, then ran it once it had acknowledged.
    for (const model of [modelA, modelB]) {
      const calls = toolCalls(model.turns().at(-1)!).filter((call) => call.name === 'Bash');
      expect(calls.map((call) => call.isError)).toEqual([true, false]);
      expect(calls[0]!.result).toContain(event);
    }
    expect([runA.code, runB.code]).toEqual([0, 0]);
  });
});
