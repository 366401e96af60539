import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon, tempProject } from '../support/daemon.js';
import { trackStarted } from '../support/started.js';
import { allText, type ScriptedModel, startAnthropicModel, type Turn } from './anthropic-model.js';
import { inAgentSuite, runClaude } from './claude.js';
import { type HookServer, json, startHookServer } from './hook-server.js';
import { tempGitProject, writeJson } from './pulse-project.js';

/*
 * The JSON Claude Code 2.1.332 writes on a command hook's stdin, one real sample per event and
 * tool, kept in test/fixtures/hooks/claude-2.1.332/ for pulse's hook tests. Run with
 * PULSE_CAPTURE_FIXTURES=1 to write them again (then `npm run format`); otherwise a capture must have the same shape
 * (the same fields, of the same types) as the fixtures, so a CLI upgrade that changes the input is
 * seen here first. Also pins `stop_hook_active` and `prompt_id` across stops and prompts.
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/hooks/claude-2.1.332/', import.meta.url));
const CAPTURE = process.env.PULSE_CAPTURE_FIXTURES === '1';
const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'];

const started = trackStarted();
const closers: Array<ScriptedModel | HookServer> = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((server) => server.close()));
  await started.cleanUp();
});

type Input = Record<string, unknown>;

const use = (name: string, input: unknown): Turn => [{ type: 'tool_use', name, input }];
const say = (text: string): Turn => [{ type: 'text', text }];

/** A command hook that saves its stdin in `dir`, named by when it ran, and answers nothing. */
const stdinSaver = (dir: string) => ({
  type: 'command',
  command: `"${process.execPath}" -e "const fs=require('fs');fs.writeFileSync(process.argv[1]+'/'+process.hrtime.bigint()+'.json',fs.readFileSync(0))" "${dir}"`,
});

/** The saved inputs, in the order the hooks ran. */
const savedInputs = async (dir: string): Promise<Input[]> => {
  const names = (await readdir(dir)).sort((a, b) =>
    BigInt(a.split('.')[0]!) < BigInt(b.split('.')[0]!) ? -1 : 1,
  );
  return Promise.all(names.map(async (name) => JSON.parse(await readFile(join(dir, name), 'utf8')) as Input));
};

/** Temp paths and ids replaced by fixed strings, so a fixture reads the same on every machine and run. */
const sanitize = (input: Input, replacements: Array<[string, string]>): Input => {
  let text = JSON.stringify(input);
  for (const [from, to] of replacements) text = text.split(from).join(to);
  return JSON.parse(text.replace(/toolu_scripted_\d+/g, 'toolu_SCRIPTED'));
};

/** A fixture's name: the event and the tool (or the session start's source, or the stop's `stop_hook_active`). */
const fixtureName = (input: Input): string => {
  const event = String(input.hook_event_name);
  const detail =
    input.tool_name ??
    input.source ??
    ('stop_hook_active' in input ? `stop_hook_active-${input.stop_hook_active}` : null);
  return detail === null ? `${event}.json` : `${event}-${String(detail)}.json`;
};

/** Each value replaced by its type, recursively: what must not change between a fixture and a new capture. */
const shape = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shape(inner)]));
  }
  return value === null ? 'null' : typeof value;
};

describe.skipIf(!inAgentSuite)('Claude Code 2.1.332 hook inputs', () => {
  it('sends each event the fields pulse reads, and keeps stop_hook_active true for the rest of a prompt once a stop was held', async () => {
    const project = await tempGitProject(started);
    const daemon = await startDaemon(project);
    started.daemons.push(daemon);
    const saved = await tempProject('pulse-claude-hooks-');
    started.projects.push(saved);
    let stops = 0;
    const stopper = await startHookServer(() =>
      ++stops <= 2 ? json({ decision: 'block', reason: `held stop ${stops}` }) : { body: '' },
    );
    closers.push(stopper);
    const hooks = Object.fromEntries(
      EVENTS.map((event) => [
        event,
        [
          {
            hooks:
              event === 'Stop'
                ? [stdinSaver(saved), { type: 'http', url: stopper.url }]
                : [stdinSaver(saved)],
          },
        ],
      ]),
    );
    await writeJson(project, '.mcp.json', { mcpServers: { pulse: { type: 'http', url: daemon.url } } });
    await writeJson(project, '.claude/settings.local.json', {
      permissions: { allow: ['mcp__pulse', 'Edit(/.pulse/plan.md)', 'Bash(touch made)'] },
      hooks,
    });
    await writeFile(join(project, 'notes.txt'), 'notes\n');
    const plan = join(project, '.pulse', 'plan.md');
    const read = use('Read', { file_path: join(project, 'notes.txt') });
    const home = await tempProject('pulse-claude-home-');
    started.projects.push(home);
    const first = await startAnthropicModel({
      script: [
        () => use('Bash', { command: 'touch made', description: 'Create made' }),
        () => read,
        () => use('Write', { file_path: plan, content: '# Plan\n\nv1\n' }),
        () => use('Edit', { file_path: plan, old_string: 'v1', new_string: 'v2' }),
        () => use('mcp__pulse__pulse_should_interrupt', {}),
        () => use('ReadMcpResourceTool', { server: 'pulse', uri: 'pulse://context/latest' }),
        () => use('ToolSearch', { query: 'select:mcp__pulse__pulse_ack_replan' }),
        () => use('TaskCreate', { subject: 'Replan', description: 'Follow the new guidance' }),
        () => say('Stopping.'),
        () => read,
        () => say('Stopping again.'),
        () => read,
        () => say('Stopping for good.'),
      ],
    });
    const second = await startAnthropicModel({ script: [() => read, () => say('Done.')] });
    closers.push(first, second);
    // TaskCreate and friends are offered only with this set (FINDINGS-claude.md, b).
    const env = { CLAUDE_CODE_ENABLE_TODO_TOOLS: '1' };

    await runClaude({ project, modelUrl: first.url, prompt: 'First prompt.', home, env });
    await runClaude({
      project,
      modelUrl: second.url,
      prompt: 'Second prompt.',
      home,
      env,
      args: ['--continue'],
    });

    expect([first.problems, first.remaining(), second.problems, second.remaining()]).toEqual([[], 0, [], 0]);
    const inputs = await savedInputs(saved);
    const of = (event: string) => inputs.filter((input) => input.hook_event_name === event);
    expect(of('SessionStart').map((input) => input.source)).toEqual(['startup', 'resume']);
    expect(of('PreToolUse').map((input) => input.tool_name)).toEqual([
      'Bash',
      'Read',
      'Write',
      'Edit',
      'mcp__pulse__pulse_should_interrupt',
      'ReadMcpResourceTool',
      'ToolSearch',
      'TaskCreate',
      'Read',
      'Read',
      'Read',
    ]);
    for (const input of of('PreToolUse'))
      expect(input).toMatchObject({ session_id: expect.any(String), cwd: project });
    expect(of('PreToolUse')[0]!.tool_input).toMatchObject({ command: 'touch made' });
    expect(of('PreToolUse')[2]!.tool_input).toMatchObject({ file_path: plan });
    expect(of('PreToolUse')[3]!.tool_input).toMatchObject({ file_path: plan });
    // A held stop leaves stop_hook_active true until the prompt ends, tool calls in between or not.
    expect(of('Stop').map((input) => input.stop_hook_active)).toEqual([false, true, true, false]);
    // prompt_id: none at SessionStart, one per prompt on every other event.
    expect(of('SessionStart').map((input) => input.prompt_id)).toEqual([undefined, undefined]);
    const prompts = inputs
      .filter((input) => input.hook_event_name !== 'SessionStart')
      .map((input) => input.prompt_id);
    expect(new Set(prompts).size).toBe(2);
    expect(
      new Set(
        of('Stop')
          .slice(0, 3)
          .map((input) => input.prompt_id),
      ).size,
    ).toBe(1);

    const session = String(inputs[0]!.session_id);
    const promptIds = [...new Set(prompts)] as string[];
    const replacements: Array<[string, string]> = [
      [project, '/PROJECT'],
      [project.replace(/[^a-zA-Z0-9]/g, '-'), '-PROJECT'],
      [home, '/HOME'],
      [session, 'SESSION'],
      ...promptIds.map((id, index): [string, string] => [id, `PROMPT-${index + 1}`]),
    ];
    const samples = new Map<string, Input>();
    for (const input of inputs) {
      const name = fixtureName(input);
      if (!samples.has(name)) samples.set(name, sanitize(input, replacements));
    }
    if (CAPTURE) {
      await mkdir(FIXTURES, { recursive: true });
      for (const [name, sample] of samples)
        await writeFile(join(FIXTURES, name), `${JSON.stringify(sample, null, 2)}\n`);
    }
    expect((await readdir(FIXTURES)).sort()).toEqual([...samples.keys()].sort());
    for (const [name, sample] of samples) {
      const fixture = JSON.parse(await readFile(join(FIXTURES, name), 'utf8'));
      expect(shape(sample), name).toEqual(shape(fixture));
    }
  });

  it('puts the context of both SessionStart and UserPromptSubmit into the first request', async () => {
    const project = await tempGitProject(started);
    const context = (event: string) => ({
      type: 'command',
      command: `echo '{"hookSpecificOutput":{"hookEventName":"${event}","additionalContext":"context from ${event}"}}'`,
    });
    await writeJson(project, '.claude/settings.local.json', {
      hooks: Object.fromEntries(
        ['SessionStart', 'UserPromptSubmit'].map((event) => [event, [{ hooks: [context(event)] }]]),
      ),
    });
    const model = await startAnthropicModel({ script: [() => say('Noted.')] });
    closers.push(model);

    await runClaude({ project, modelUrl: model.url, prompt: 'Go.' });

    const text = allText(model.turns()[0]!);
    expect(text).toContain('SessionStart hook additional context: context from SessionStart');
    expect(text).toContain('UserPromptSubmit hook additional context: context from UserPromptSubmit');
  });
});
