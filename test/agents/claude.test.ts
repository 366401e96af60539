import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readEvents, waitUntil } from '../helpers/daemon.js';
import { save } from '../helpers/files.js';
import { trackStarted } from '../helpers/started.js';
import {
  allText,
  type ScriptedModel,
  type Step,
  startAnthropicModel,
  type Turn,
  toolCalls,
} from './anthropic-model.js';
import { inAgentSuite, runClaude } from './claude.js';
import { pulseProjectForClaude } from './pulse-project.js';

/*
 * The replan interrupt with the real Claude Code: a real daemon, `pulse setup claude --write` as
 * the README says, `claude -p` with no permission flag, and only the model scripted. What runs,
 * what is held and what the model reads back are all taken from the requests Claude Code sends.
 */

const started = trackStarted();
const models: ScriptedModel[] = [];

afterEach(async () => {
  await Promise.all(models.splice(0).map((model) => model.close()));
  await started.cleanUp();
});

const use = (name: string, input: unknown): Turn => [{ type: 'tool_use', name, input }];
const say = (text: string): Turn => [{ type: 'text', text }];

const model = async (script: Step[]) => {
  const started = await startAnthropicModel({ script });
  models.push(started);
  return started;
};

/** The user edits the guidance, and pulse logs it: the id of the replan that is now pending. */
const editGuidance = async (project: string): Promise<string> => {
  await save(join(project, '.pulse', 'guidance.md'), '# Guidance\n\nUse the new API.\n');
  const event = await waitUntil(
    async () => (await readEvents(project)).find((e) => e.path.endsWith('guidance.md')),
    { describe: () => 'pulse to log the guidance edit' },
  );
  return event.id;
};

/** The user's own permission for the one command the script runs: pulse grants nothing for it. */
const userSettings = { permissions: { allow: ['Bash(touch src-file)'] } };

describe.skipIf(!inAgentSuite)('Claude Code 2.1.332, set up by `pulse setup claude --write`', () => {
  it('holds work while a replan is pending, and lets the agent replan and acknowledge with no human approval', async () => {
    const { project } = await pulseProjectForClaude(started);
    let pending = '';
    const touch = use('Bash', { command: 'touch src-file', description: 'Create src-file' });
    const agent = await model([
      () => use('mcp__pulse__pulse_should_interrupt', {}),
      async () => {
        pending = await editGuidance(project);
        return touch;
      },
      () => use('Read', { file_path: join(project, '.pulse', 'guidance.md') }),
      () =>
        use('Write', {
          file_path: join(project, '.pulse', 'plan.md'),
          content: '# Plan\n\nUse the new API.\n',
        }),
      (request) => {
        // The id the model acknowledges is the one the held call's reason named.
        const held = toolCalls(request).find((call) => call.name === 'Bash')?.result ?? '';
        return use('mcp__pulse__pulse_ack_replan', { event_id: /event_id "([^"]+)"/.exec(held)?.[1] });
      },
      () => touch,
      () => say('Done.'),
    ]);

    const run = await runClaude({
      project,
      modelUrl: agent.url,
      prompt: 'Carry on with the task.',
      userSettings,
    });

    // Nothing may wait for a click: a denial here is a prompt an unattended agent never gets past.
    const denied = run.events.filter((event) => event.subtype === 'permission_denied');
    expect(denied.map(({ tool_name, message }) => ({ tool_name, message }))).toEqual([]);
    expect(agent.problems).toEqual([]);
    expect(agent.remaining()).toBe(0);
    const [check, held, read, plan, ack, work] = toolCalls(agent.turns().at(-1)!);
    expect(JSON.parse(check!.result!)).toMatchObject({ needs_replan: false });
    expect(held).toMatchObject({ name: 'Bash', isError: true });
    expect(held!.result).toContain(`pulse: a replan is pending (event ${pending}`);
    expect(held!.result).toContain(`call pulse_ack_replan with event_id "${pending}"`);
    expect(read).toMatchObject({ name: 'Read', isError: false });
    expect(read!.result).toContain('Use the new API.');
    expect(plan).toMatchObject({ name: 'Write', isError: false });
    expect(await readFile(join(project, '.pulse', 'plan.md'), 'utf8')).toBe('# Plan\n\nUse the new API.\n');
    expect(ack!.isError).toBe(false);
    expect(JSON.parse(ack!.result!)).toMatchObject({ accepted: true, acknowledged_event_id: pending });
    expect(work).toMatchObject({ name: 'Bash', isError: false });
    expect(existsSync(join(project, 'src-file'))).toBe(true);
    expect(run.code).toBe(0);
  });

  it("lets the agent load pulse's tool schemas with ToolSearch while a replan is pending", async () => {
    // 2.1.332 defers MCP tools: the model is told to load a schema with ToolSearch before calling it.
    const { project } = await pulseProjectForClaude(started);
    await editGuidance(project);
    const agent = await model([
      () => use('ToolSearch', { query: 'select:mcp__pulse__pulse_ack_replan' }),
      () => say('Loaded.'),
    ]);

    await runClaude({ project, modelUrl: agent.url, prompt: 'Carry on.' });

    const [search] = toolCalls(agent.turns().at(-1)!);
    expect(search).toMatchObject({ name: 'ToolSearch', isError: false });
  });

  it('tells a session that starts with a replan pending about it once, not once per hook', async () => {
    const { project } = await pulseProjectForClaude(started);
    const pending = await editGuidance(project);
    // The stop is held once (the replan is still pending), so the model answers twice.
    const agent = await model([() => say('Noted.'), () => say('Still noted.')]);

    await runClaude({ project, modelUrl: agent.url, prompt: 'Carry on.' });

    const first = allText(agent.turns()[0]!);
    expect(first.split(`a replan is pending (event ${pending}`).length - 1).toBe(1);
  });
});
