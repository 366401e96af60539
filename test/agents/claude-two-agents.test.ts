import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pulseRunning } from '../support/cli-running.js';
import { runCli } from '../support/daemon.js';
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
import { pulseAnswer, revisionIn } from './revision.js';

/*
 * Two real Claude Code sessions in one project at once, each with its own scripted model: agent A
 * replans and acknowledges a guidance change; agent B, which was working too, is still held until
 * it acknowledges the change itself. And the user's half: `pulse guide --wait` steers both and
 * prints each ack as it comes, one without a plan change, one with its diff. Claude Code 2.1.332
 * speaks MCP 2026-07-28 wherever server/discover is answered (era-negotiation.test.ts): no protocol
 * session, so pulse knows each by the handle it minted, and status and the log say the revision.
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

/** The handle pulse minted at the session's check-in (null when it had an MCP session). */
const handleOf = (request: Parameters<Step>[0]): string | null =>
  pulseAnswer(toolCalls(request).find((call) => call.name === 'mcp__pulse__pulse_should_interrupt')?.result)
    ?.agent_handle ?? null;

/** The ack of the event the held Bash call's refusal named, with the handle pulse minted at check-in. */
const heldEvent: Step = (request) => {
  const held = toolCalls(request).findLast((call) => call.name === 'Bash')?.result ?? '';
  return use('mcp__pulse__pulse_ack_replan', {
    event_id: /event_id "([^"]+)"/.exec(held)?.[1],
    handle: handleOf(request) ?? undefined,
  });
};

/** Claude Code as status, `--wait` and the log name it; which marks follow depends on the era (a handle on 2026-07-28). */
const CLAUDE_CODE = /Claude Code 2\.1\.332 \(/;

/**
 * The steps of an agent that replans: read the change, write its plan, ack the event its held call
 * named, run again; `beforeAck` runs first at the ack (the user looking at status).
 */
const replanSteps = (
  project: string,
  name: string,
  touch: Turn,
  after: () => void,
  beforeAck: () => Promise<unknown> = async () => {},
): Step[] => [
  () => use('Read', { file_path: join(project, '.pulse', 'guidance.md') }),
  () =>
    use('Write', { file_path: join(project, '.pulse', 'plan.md'), content: `# Plan\n\n${name} follows.\n` }),
  async (request) => {
    await beforeAck();
    return heldEvent(request);
  },
  () => touch,
  () => {
    after();
    return say('Done.');
  },
];

describe.skipIf(!inAgentSuite)('two Claude Code 2.1.332 sessions in one project', () => {
  it("holds agent B after agent A's ack, until B replans and acknowledges itself", async () => {
    const { project, port, daemon } = await pulseProjectForClaude(started);
    const bCheckedIn = signal();
    const aAcked = signal();
    let pending = '';
    let statusWhileOwing = '';
    const lookAtStatus = async () => {
      statusWhileOwing = (await runCli(['status', '-p', project, '--port', String(port)])).stdout;
    };
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
        ...replanSteps(project, 'A', touchA, aAcked.resolve, lookAtStatus),
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

    // Both on 2026-07-28: no session, so each was given a handle of its own, and status says the revision.
    const handles = [modelA, modelB].map((model) => handleOf(model.turns().at(-1)!));
    expect(handles, 'pulse minted a handle for each session').toEqual([
      expect.any(String),
      expect.any(String),
    ]);
    expect(handles[0]).not.toBe(handles[1]);
    const owing = statusWhileOwing.match(/^owes ack: .* owes evt_\S+$/gm) ?? [];
    expect(owing, statusWhileOwing).toHaveLength(2);
    for (const line of owing)
      expect(line).toMatch(new RegExp(`^owes ack: +${CLAUDE_CODE.source}.* owes ${pending}$`));
    expect(revisionIn(statusWhileOwing, CLAUDE_CODE), statusWhileOwing).toBe('2026-07-28');
    expect(revisionIn(daemon.output(), CLAUDE_CODE), 'the daemon log').toBe('2026-07-28');
  });
});

describe.skipIf(!inAgentSuite)('pulse guide --wait steering two Claude Code 2.1.332 sessions', () => {
  it('prints each session’s ack as it comes, one without a plan change, one with its diff, and exits 0', async () => {
    const { project, daemon } = await pulseProjectForClaude(started);
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
    // Each named by its product and version, then the marks that tell it apart (a hook session, and
    // its MCP session on 2025-11-25 or the handle pulse minted on 2026-07-28).
    const mark = '(?:hook session|session|handle) [0-9A-Za-z_-]{8}…';
    const session = `Claude Code 2\\.1\\.332 \\(${mark}, ${mark}\\)`;
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
    expect(revisionIn(daemon.output(), CLAUDE_CODE), 'the daemon log').toBe('2026-07-28');
  });
});
