import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { PULSE_TOOLS } from '../../src/hooks/pulse-tools.js';
import { trackStarted } from '../support/started.js';
import { type ChatBody, contentText, type Step, startScriptedChatModel } from './chat-model.js';
import {
  type HookCall,
  installRecordingPlugin,
  makeOpencodeHome,
  type OpencodeHome,
  type OpencodeRun,
  opencodeConfig,
  type PluginAnswers,
  pulseMcp,
  recordedCalls,
  runOpencode,
} from './opencode.js';
import { fixtureFile, gitProjectWithDaemon, toolCall } from './smoke-scene.js';

/*
 * The real opencode (1.18.33, `opencode run`) offline against a scripted Chat Completions model
 * (an @ai-sdk/openai-compatible provider in opencode.json), with a recording plugin of our own in
 * .opencode/plugins/ and pulse's real daemon as the remote MCP server. What it shows is written up in
 * FINDINGS-opencode.md; the hook calls it records are the fixtures in
 * test/fixtures/hooks/opencode-1.18.33/ (PULSE_WRITE_FIXTURES=1 rewrites them).
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/hooks/opencode-1.18.33/', import.meta.url));

const started = trackStarted();

afterEach(() => started.cleanUp());

const pulseProject = () => gitProjectWithDaemon(started, 'pulse-opencode-');

/** One `opencode run` on a script, and what the model was sent in its turns (title requests left out). */
interface ScriptedRun {
  run: OpencodeRun;
  turns: ChatBody[];
  home: OpencodeHome;
  context: string;
}

/** Runs opencode in `project` with `config` merged into opencode.json and the recording plugin answering `answers`. */
const opencodeScripted = async (
  project: string,
  steps: Step[],
  { config = {}, answers = {} }: { config?: Record<string, unknown>; answers?: PluginAnswers } = {},
): Promise<ScriptedRun> => {
  // The title request offers no tools and consumes no step.
  const model = await startScriptedChatModel(steps);
  started.streams.push({ close: () => void model.close() });
  const home = await makeOpencodeHome();
  started.projects.push(home.home);
  await writeFile(
    join(project, 'opencode.json'),
    JSON.stringify(opencodeConfig(model.baseUrl, config), null, 2),
  );
  await installRecordingPlugin(project, home, answers);
  const run = await runOpencode({ cwd: project, home, prompt: 'Do the task' });
  const context = `opencode exited ${run.code} after ${model.turns().length} model turns\n${run.stderr.slice(-2000)}`;
  return { run, turns: model.turns(), home, context };
};

const call = toolCall;

/** The messages of a request after the first system message, as the model read them. */
const conversation = (body: ChatBody) =>
  body.messages.slice(1).map((message) => ({ role: message.role, text: contentText(message.content) }));

/** A recorded hook call with this machine's paths, ids, times and ports replaced, as the fixtures keep them. */
const normalise = (value: unknown, project: string, home: string): unknown =>
  JSON.parse(
    JSON.stringify(value)
      .replaceAll(project, '/PROJECT')
      .replaceAll(home, '/HOME')
      .replace(/\b(ses|msg|prt|evt|per|que)_[A-Za-z0-9]{10,}\b/g, '$1_ID')
      .replace(/\b\d{13}\b/g, '0')
      .replace(/\b[0-9a-f]{40}\b/g, 'HASH')
      .replace(/session:[0-9a-f-]{36}/g, 'session:MCP_SESSION')
      .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')
      .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'DATE')
      .replace(/"slug":"[^"]*"/g, '"slug":"SLUG"')
      .replace(/Today's date: [^\\"]*/g, "Today's date: DATE"),
  );

/** The keys of an object, and of each object value, one level down: the shape a fixture pins when its values vary. */
const shape = (value: unknown): unknown =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? Object.fromEntries(
        Object.entries(value)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([key, item]) => [
            key,
            typeof item === 'object' && item !== null && !Array.isArray(item)
              ? Object.keys(item).sort()
              : typeof item,
          ]),
      )
    : typeof value;

/**
 * Writes (PULSE_WRITE_FIXTURES=1) or checks one fixture: `exact` ones must equal the capture, the
 * others (system prompts, configs, message lists) must have its shape.
 */
const fixture = async (
  name: string,
  captured: unknown,
  { project, home, exact = true }: { project: string; home: string; exact?: boolean },
) => {
  expect(captured, name).toBeDefined();
  const value = normalise(captured, project, home);
  const kept = await fixtureFile(FIXTURES, name, value);
  if (exact) expect(value, name).toEqual(kept);
  else expect(shape(value), name).toEqual(shape(kept));
};

describe.skipIf(!process.env.PULSE_AGENT_SUITE)('the real opencode (opencode run), smoke', () => {
  it("runs every tool kind, offers pulse's tools as pulse_<tool>, and passes each plugin hook what pulse will read", async () => {
    const { project, daemon } = await pulseProject();
    const path = (file: string) => join(project, file);
    const steps: Step[] = [
      () => [call('pulse_pulse_should_interrupt', {}, 'c-interrupt')],
      () => [call('bash', { command: 'touch made-by-shell', description: 'Touch a file' }, 'c-bash')],
      () => [call('read', { filePath: path('README.md') }, 'c-read')],
      () => [call('write', { filePath: path('notes.txt'), content: 'notes\n' }, 'c-write')],
      () => [
        call('edit', { filePath: path('README.md'), oldString: 'hello', newString: 'goodbye' }, 'c-edit'),
      ],
      () => [call('grep', { pattern: 'goodbye', include: '*.md' }, 'c-grep')],
      () => [call('glob', { pattern: '*.txt' }, 'c-glob')],
      () => [
        call('todowrite', { todos: [{ content: 'Replan', status: 'pending', priority: 'high' }] }, 'c-todo'),
      ],
      () => [call('pulse_pulse_ack_replan', { event_id: 'evt_none' }, 'c-ack')],
      () => 'All done.',
    ];
    const { run, turns, home, context } = await opencodeScripted(project, steps, {
      config: pulseMcp(daemon.url),
    });
    expect(run.code, context).toBe(0);
    expect(turns, context).toHaveLength(steps.length);

    const offered = (turns[0]!.tools ?? []).map((tool) => tool.function.name);
    expect(offered.filter((name) => name.startsWith('pulse_')).sort()).toEqual(
      PULSE_TOOLS.map((tool) => `pulse_${tool}`).sort(),
    );
    expect(offered).toEqual(
      expect.arrayContaining(['bash', 'read', 'write', 'edit', 'grep', 'glob', 'todowrite', 'task']),
    );
    expect(existsSync(path('made-by-shell')) && existsSync(path('notes.txt')), context).toBe(true);
    expect(await readFile(path('README.md'), 'utf8')).toBe('goodbye world\n');
    const outputs = conversation(turns.at(-1)!).filter(({ role }) => role === 'tool');
    expect(outputs.find(({ text }) => text.includes('README.md'))?.text, 'grep found the edit').toMatch(
      /README\.md/,
    );

    const before = await recordedCalls(home, 'tool.execute.before');
    const after = await recordedCalls(home, 'tool.execute.after');
    const of = (calls: HookCall[], tool: string) => calls.find((entry) => entry.input.tool === tool);
    expect(before.map((entry) => entry.input.tool)).toEqual([
      'pulse_pulse_should_interrupt',
      'bash',
      'read',
      'write',
      'edit',
      'grep',
      'glob',
      'todowrite',
      'pulse_pulse_ack_replan',
    ]);
    expect(after.map((entry) => entry.input.tool)).toEqual(before.map((entry) => entry.input.tool));
    // The session id is opencode's own (`ses_…`), the same in every hook; args are the parsed object.
    const session = (before[0]!.input as { sessionID: string }).sessionID;
    expect(session).toMatch(/^ses_/);
    expect(of(before, 'bash')).toEqual({
      input: { tool: 'bash', sessionID: session, callID: 'c-bash' },
      output: { args: { command: 'touch made-by-shell', description: 'Touch a file' } },
    });
    // pulse's answer, agent_id included, is in the MCP call's after-hook output.
    const answered = of(after, 'pulse_pulse_should_interrupt')!.output as {
      content: Array<{ text: string }>;
    };
    expect(JSON.parse(answered.content[0]!.text).agent_id).toMatch(/^session:/);

    const where = { project, home: home.home };
    for (const tool of before.map((entry) => entry.input.tool as string)) {
      await fixture(`tool.execute.before-${tool}`, of(before, tool), where);
      await fixture(`tool.execute.after-${tool}`, of(after, tool), { ...where, exact: tool !== 'edit' });
    }
    // The title request runs the chat hooks too (agent "title"); the fixtures keep the build agent's.
    const first = async (hook: string) =>
      (await recordedCalls(home, hook)).find(
        ({ input, output }) =>
          input?.agent !== 'title' &&
          !String((output?.system as string[] | undefined)?.[0]).includes('title generator'),
      );
    await fixture('chat.message', await first('chat.message'), { ...where, exact: false });
    await fixture('experimental.chat.system.transform', await first('experimental.chat.system.transform'), {
      ...where,
      exact: false,
    });
    await fixture(
      'experimental.chat.messages.transform',
      await first('experimental.chat.messages.transform'),
      {
        ...where,
        exact: false,
      },
    );
    for (const hook of [
      'chat.params',
      'chat.headers',
      'shell.env',
      'experimental.text.complete',
      'config',
      'init',
    ])
      await fixture(hook, await first(hook), { ...where, exact: false });
    const definitions = await recordedCalls(home, 'tool.definition');
    await fixture(
      'tool.definition-bash',
      definitions.find((entry) => entry.input.toolID === 'bash'),
      { ...where, exact: false },
    );
    const events = await recordedCalls<{ type: string; properties: Record<string, unknown> }>(home, 'event');
    const idle = events.find((event) => event.type === 'session.idle');
    expect(idle?.properties).toEqual({ sessionID: session });
    await fixture('event-session.idle', idle, where);
    await fixture(
      'event-session.status',
      events.find((event) => event.type === 'session.status'),
      where,
    );
  });

  it('fails the tool call the plugin throws in tool.execute.before, built-in or MCP, with the message as its result; the plugin adds context', async () => {
    const { project, daemon } = await pulseProject();
    const answers: PluginAnswers = {
      'tool.execute.before': [
        { tool: 'bash', nth: 1, throw: 'pulse: replan first (event evt_1)' },
        { tool: 'pulse_pulse_should_interrupt', throw: 'pulse: MCP call held' },
      ],
      'experimental.chat.system.transform': [{ system: 'CONTEXT-IN-SYSTEM' }],
      'chat.message': [{ part: 'CONTEXT-IN-PROMPT' }],
      'tool.execute.after': [{ appendOutput: '\nCONTEXT-AFTER-TOOL' }],
    };
    const steps: Step[] = [
      () => [call('bash', { command: 'touch held', description: 'Touch' }, 'c-held')],
      () => [call('pulse_pulse_should_interrupt', {}, 'c-interrupt')],
      () => [call('bash', { command: 'touch ran', description: 'Touch' }, 'c-ran')],
      () => 'Done.',
    ];
    const { run, turns, home, context } = await opencodeScripted(project, steps, {
      config: pulseMcp(daemon.url),
      answers,
    });
    expect(run.code, context).toBe(0);
    expect(existsSync(join(project, 'held')), 'the thrown call did not run').toBe(false);
    expect(existsSync(join(project, 'ran'))).toBe(true);
    expect(conversation(turns.at(-1)!)).toEqual([
      { role: 'system', text: 'CONTEXT-IN-SYSTEM' },
      { role: 'user', text: '"Do the task"CONTEXT-IN-PROMPT' },
      { role: 'assistant', text: '' },
      { role: 'tool', text: 'pulse: replan first (event evt_1)' },
      { role: 'assistant', text: '' },
      { role: 'tool', text: 'pulse: MCP call held' },
      { role: 'assistant', text: '' },
      { role: 'tool', text: '(no output)\nCONTEXT-AFTER-TOOL' },
    ]);
    // The added system message is there on every turn, not once.
    for (const turn of turns)
      expect(conversation(turn)[0]).toEqual({ role: 'system', text: 'CONTEXT-IN-SYSTEM' });
    // A thrown call gets no tool.execute.after.
    expect((await recordedCalls(home, 'tool.execute.after')).map((entry) => entry.input.tool)).toEqual([
      'bash',
    ]);
    const failed = run.events.filter((event) => event.part?.state?.status === 'error');
    expect(failed.map((event) => event.part?.state?.error)).toEqual([
      'pulse: replan first (event evt_1)',
      'pulse: MCP call held',
    ]);
  });

  it('holds a stop only with a prompt sent while the turn is still running: one sent on session.idle comes too late for `opencode run`', async () => {
    const { project } = await pulseProject();
    const reason = 'pulse: a replan is pending';
    const steps: Step[] = [() => 'Stopping.', () => 'Sent back.'];

    const late = await opencodeScripted(project, steps, { answers: { event: { idlePrompt: reason } } });
    expect(late.run.code, late.context).toBe(0);
    expect(await recordedCalls(late.home, 'prompt-sent'), 'the plugin sent its prompt').toHaveLength(1);
    // The prompt became a user message (chat.message ran for it), but the model was never asked again.
    expect(await recordedCalls(late.home, 'chat.message')).toHaveLength(2);
    expect(late.turns, late.context).toHaveLength(1);

    // Sent (not awaited) when the answer's text completes, before the session goes idle: a new turn.
    const held = await opencodeScripted(project, steps, {
      answers: { 'experimental.text.complete': [{ nth: 1, prompt: reason }] },
    });
    expect(held.run.code, held.context).toBe(0);
    expect(held.turns, held.context).toHaveLength(2);
    expect(conversation(held.turns[1]!)).toEqual([
      { role: 'user', text: '"Do the task"' },
      { role: 'assistant', text: 'Stopping.' },
      { role: 'user', text: reason },
    ]);
  });

  it('with `"*": "ask"` auto-rejects what is not allowed and ends the run; allowing pulse\'s three tools by name lets them run', async () => {
    const { project, daemon } = await pulseProject();
    const allowPulse = Object.fromEntries(PULSE_TOOLS.map((tool) => [`pulse_${tool}`, 'allow']));
    const steps: Step[] = [
      () => [call('pulse_pulse_should_interrupt', {}, 'c-interrupt')],
      () => [call('bash', { command: 'touch held', description: 'Touch' }, 'c-held')],
      () => 'Never asked.',
    ];
    const { run, turns, home, context } = await opencodeScripted(project, steps, {
      config: { ...pulseMcp(daemon.url), permission: { '*': 'ask', ...allowPulse } },
    });
    expect(run.code, context).toBe(0);
    expect(turns, context).toHaveLength(2);
    expect(existsSync(join(project, 'held'))).toBe(false);
    const states = run.events.flatMap((event) => (event.part?.state ? [event.part.state] : []));
    expect(states.map((state) => state.status)).toEqual(['completed', 'error']);
    expect(states[1]!.error).toBe('The user rejected permission to use this specific tool call.');
    expect(run.stderr).toContain('permission requested: bash (touch held); auto-rejecting');
    const asked = (await recordedCalls<{ type: string }>(home, 'event')).find(
      (event) => event.type === 'permission.asked',
    );
    await fixture('event-permission.asked', asked, { project, home: home.home });
  });
});
