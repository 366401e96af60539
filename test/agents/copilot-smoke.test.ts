import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { PULSE_TOOLS } from '../../src/hooks/pulse-tools.js';
import { trackStarted } from '../support/started.js';
import { type ChatBody, contentText, type Step, startScriptedChatModel } from './chat-model.js';
import {
  ALLOW_PULSE_TOOLS,
  type CopilotRun,
  makeCopilotHome,
  recordingHooks,
  runCopilot,
  writeMcpJson,
} from './copilot.js';
import { fixtureFile, gitProjectWithDaemon, toolCall } from './smoke-scene.js';

/*
 * The real GitHub Copilot CLI (1.0.102, `copilot -p`) offline against a scripted Chat Completions
 * model, with a recording command hook of our own on every event (.github/hooks/recording.json) and
 * pulse's real daemon as the project's MCP server (.mcp.json). What it shows is written up in
 * FINDINGS-copilot.md; the inputs it records are the fixtures in test/fixtures/hooks/copilot-1.0.102/
 * (PULSE_WRITE_FIXTURES=1 rewrites them, otherwise each capture must equal its fixture).
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/hooks/copilot-1.0.102/', import.meta.url));

const started = trackStarted();

afterEach(() => started.cleanUp());

/** A git project served by a real `pulse start`, with pulse in its .mcp.json. */
const pulseProject = async () => {
  const scene = await gitProjectWithDaemon(started, 'pulse-copilot-');
  await writeMcpJson(scene.project, scene.daemon.url);
  return scene;
};

/** One `copilot -p` run on a script, and what the model was sent. */
interface ScriptedRun {
  run: CopilotRun;
  turns: ChatBody[];
  home: string;
  context: string;
}

/** Runs Copilot in `project` on `steps`, in a temp HOME trusting the project unless `trusted` is false. */
const copilotScripted = async (
  project: string,
  steps: Step[],
  {
    args = ALLOW_PULSE_TOOLS,
    trusted = true,
    env = {},
  }: { args?: string[]; trusted?: boolean; env?: Record<string, string> } = {},
): Promise<ScriptedRun> => {
  // Every request is a turn: a subagent's requests are steps of the script too.
  const model = await startScriptedChatModel(steps, { isTurn: () => true });
  started.streams.push({ close: () => void model.close() });
  const home = await makeCopilotHome(trusted ? [project] : []);
  started.projects.push(home.home);
  const run = await runCopilot({
    cwd: project,
    home,
    baseUrl: model.baseUrl,
    prompt: 'Do the task',
    args,
    env,
  });
  const context = `copilot exited ${run.code} after ${model.turns().length} model requests\n${run.stderr}`;
  return { run, turns: model.turns(), home: home.home, context };
};

const call = toolCall;

/** The tool results and user texts of the last request, in order, as the model read them. */
const conversation = (body: ChatBody) =>
  body.messages
    .filter((message) => message.role !== 'system')
    .map((message) => ({ role: message.role, text: contentText(message.content) }));

/** A captured hook input with this machine's paths and ids replaced, as the fixtures keep them. */
const normalise = (input: Record<string, unknown>, project: string, home: string): unknown => {
  const raw = JSON.stringify(input);
  // Copilot CLI speaks MCP 2026-07-28 to pulse: it is known by the handle pulse minted, new each run.
  const handles = [...raw.matchAll(/handle:([A-Za-z0-9_-]{8,64})/g)].map((match) => match[1]!);
  const text = handles
    .reduce((out, handle) => out.replaceAll(handle, 'HANDLE'), raw)
    .replaceAll(project, '/PROJECT')
    .replaceAll(home, '/HOME')
    .replace(/"timestamp":\d+/g, '"timestamp":0')
    .replace(/<current_datetime>[^<]*<\/current_datetime>/g, '<current_datetime>DATETIME</current_datetime>')
    .replace(/session:[0-9a-f-]{36}/g, 'session:MCP_SESSION');
  const sessionId = input.sessionId as string;
  const agentId = input.agentId as string | undefined;
  const parent = input.parentAgentId as string | undefined;
  let out = text.replaceAll(agentId ?? '\0', 'AGENT_ID').replaceAll(sessionId, 'SESSION_ID');
  if (parent !== undefined) out = out.replaceAll(parent, 'SESSION_ID');
  return JSON.parse(out);
};

/** Checks one capture against its fixture (PULSE_WRITE_FIXTURES=1 rewrites it). */
const fixture = async (
  name: string,
  input: Record<string, unknown> | undefined,
  project: string,
  home: string,
) => {
  expect(input, name).toBeDefined();
  const value = normalise(input!, project, home);
  expect(value, name).toEqual(await fixtureFile(FIXTURES, name, value));
};

describe.skipIf(!process.env.PULSE_AGENT_SUITE)('the real GitHub Copilot CLI (copilot -p), smoke', () => {
  it("runs every tool kind, offers pulse's tools as pulse-<tool>, and gives each hook event the input pulse will read", async () => {
    const { project } = await pulseProject();
    const hooks = await recordingHooks(project);
    const path = (file: string) => join(project, file);
    const steps: Step[] = [
      () => [call('pulse-pulse_should_interrupt', {}, 'c-interrupt')],
      () => [call('bash', { command: 'touch made-by-shell', description: 'Touch a file' }, 'c-bash')],
      () => [call('view', { path: path('README.md') }, 'c-view')],
      () => [call('view', { path: path('missing.md') }, 'c-view-missing')],
      () => [call('create', { path: path('notes.txt'), file_text: 'notes\n' }, 'c-create')],
      () => [call('edit', { path: path('README.md'), old_str: 'hello', new_str: 'goodbye' }, 'c-edit')],
      () => [call('grep', { pattern: 'goodbye', paths: project }, 'c-grep')],
      () => [call('glob', { pattern: '*.txt' }, 'c-glob')],
      () => [
        call(
          'sql',
          {
            description: 'Add a todo',
            query: "INSERT INTO todos (id, title, status) VALUES ('t1', 'Replan', 'pending')",
          },
          'c-sql',
        ),
      ],
      () => [call('pulse-pulse_ack_replan', { event_id: 'evt_none' }, 'c-ack')],
      () => [
        call(
          'task',
          { description: 'Look around', prompt: 'List the files', agent_type: 'explore', name: 'looker' },
          'c-task',
        ),
      ],
      () => 'The explorer found README.md.',
      () => 'All done.',
    ];
    const { run, turns, home, context } = await copilotScripted(project, steps, {
      args: [...ALLOW_PULSE_TOOLS, '--allow-tool=write', '--allow-tool=shell(touch)'],
    });
    expect(run.code, context).toBe(0);
    expect(turns, context).toHaveLength(steps.length);

    // pulse's server, from .mcp.json of a trusted folder, offered as `<server>-<tool>`.
    const offered = (turns[0]!.tools ?? []).map((tool) => tool.function.name);
    expect(offered.filter((name) => name.startsWith('pulse-')).sort()).toEqual(
      PULSE_TOOLS.map((tool) => `pulse-${tool}`).sort(),
    );
    expect(offered).toEqual(
      expect.arrayContaining(['bash', 'view', 'create', 'edit', 'grep', 'glob', 'sql', 'task']),
    );
    expect(existsSync(path('made-by-shell')) && existsSync(path('notes.txt')), context).toBe(true);
    expect(await readFile(path('README.md'), 'utf8')).toBe('goodbye world\n');

    const pre = await hooks.inputs('preToolUse');
    const post = await hooks.inputs('postToolUse');
    const byTool = (inputs: Array<Record<string, unknown>>, name: string) =>
      inputs.find((input) => input.toolName === name);
    expect(pre.map((input) => input.toolName)).toEqual([
      'pulse-pulse_should_interrupt',
      'bash',
      'view',
      'view',
      'create',
      'edit',
      'grep',
      'glob',
      'sql',
      'pulse-pulse_ack_replan',
      'task',
    ]);
    // toolArgs is the parsed object; the MCP result text carries pulse's agent_id.
    expect(byTool(pre, 'bash')?.toolArgs).toEqual({
      command: 'touch made-by-shell',
      description: 'Touch a file',
    });
    const interrupt = byTool(post, 'pulse-pulse_should_interrupt')?.toolResult as {
      textResultForLlm: string;
    };
    expect(JSON.parse(interrupt.textResultForLlm).agent_id).toMatch(/^handle:/);
    // The failed view goes to postToolUseFailure, not postToolUse.
    const failures = await hooks.inputs('postToolUseFailure');
    expect(failures.map((input) => input.toolName)).toEqual(['view']);
    // Every input names the session and the project folder.
    const session = (await hooks.inputs('sessionStart'))[0]?.sessionId;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    for (const input of [...pre, ...post]) expect([input.sessionId, input.cwd]).toEqual([session, project]);

    for (const [event, tool] of [
      ['preToolUse', 'bash'],
      ['preToolUse', 'view'],
      ['preToolUse', 'create'],
      ['preToolUse', 'edit'],
      ['preToolUse', 'grep'],
      ['preToolUse', 'glob'],
      ['preToolUse', 'sql'],
      ['preToolUse', 'task'],
      ['preToolUse', 'pulse-pulse_should_interrupt'],
      ['preToolUse', 'pulse-pulse_ack_replan'],
      ['postToolUse', 'bash'],
      ['postToolUse', 'create'],
      ['postToolUse', 'edit'],
      ['postToolUse', 'pulse-pulse_should_interrupt'],
      ['postToolUse', 'pulse-pulse_ack_replan'],
    ] as const) {
      await fixture(`${event}-${tool}`, byTool(event === 'preToolUse' ? pre : post, tool), project, home);
    }
    await fixture('postToolUseFailure-view', failures[0], project, home);
    const permissions = await hooks.inputs('permissionRequest');
    // Asked for the shell, pulse's tool (as `pulse/<tool>`), and both file tools as `edit` (create first).
    expect(permissions.map((input) => input.toolName)).toEqual([
      'pulse/pulse_should_interrupt',
      'bash',
      'edit',
      'edit',
      'pulse/pulse_ack_replan',
    ]);
    const [asked, shell, created, edited] = permissions;
    await fixture('permissionRequest-pulse-pulse_should_interrupt', asked, project, home);
    await fixture('permissionRequest-bash', shell, project, home);
    await fixture('permissionRequest-create', created, project, home);
    await fixture('permissionRequest-edit', edited, project, home);
    // Before an MCP call only: the server and the tool by their own names, and the call id.
    const mcpCalls = await hooks.inputs('preMcpToolCall');
    expect(mcpCalls.map((input) => [input.serverName, input.toolName])).toEqual([
      ['pulse', 'pulse_should_interrupt'],
      ['pulse', 'pulse_ack_replan'],
    ]);
    await fixture('preMcpToolCall-pulse_should_interrupt', mcpCalls[0], project, home);
    await fixture('sessionStart', (await hooks.inputs('sessionStart'))[0], project, home);
    await fixture('sessionEnd', (await hooks.inputs('sessionEnd'))[0], project, home);
    await fixture('userPromptSubmitted', (await hooks.inputs('userPromptSubmitted'))[0], project, home);
    await fixture('userPromptTransformed', (await hooks.inputs('userPromptTransformed'))[0], project, home);
    await fixture('subagentStart-explore', (await hooks.inputs('subagentStart'))[0], project, home);
    await fixture('subagentStop-explore', (await hooks.inputs('subagentStop'))[0], project, home);
    // The subagent's stop comes first, under its own id; then the main agent's.
    const stops = await hooks.inputs('agentStop');
    expect(stops.map((input) => input.agentType ?? 'main')).toEqual(['explore', 'main']);
    await fixture('agentStop-subagent', stops[0], project, home);
    await fixture('agentStop-stop_hook_active-false', stops[1], project, home);
  });

  it("denies a tool call from preToolUse with the model reading 'Denied by preToolUse hook: <reason>', and adds context where each event puts it", async () => {
    const { project } = await pulseProject();
    const hooks = await recordingHooks(project);
    const reason = 'pulse: replan first (event evt_1)';
    await hooks.answer('preToolUse', {
      nth: 1,
      output: { permissionDecision: 'deny', permissionDecisionReason: reason },
    });
    await hooks.answer('preToolUse', {
      nth: 2,
      output: { permissionDecision: 'allow', additionalContext: 'CONTEXT-FROM-PRE-TOOL' },
    });
    await hooks.answer('sessionStart', { output: { additionalContext: 'CONTEXT-FROM-SESSION-START' } });
    await hooks.answer('userPromptSubmitted', { output: { additionalContext: 'CONTEXT-FROM-PROMPT' } });
    await hooks.answer('postToolUse', { output: { additionalContext: 'CONTEXT-FROM-POST-TOOL' } });
    const steps: Step[] = [
      () => [call('bash', { command: 'touch held', description: 'Touch' }, 'c-held')],
      () => [call('bash', { command: 'touch ran', description: 'Touch' }, 'c-ran')],
      () => 'Done.',
    ];
    const { run, turns, context } = await copilotScripted(project, steps, {
      args: ['--allow-tool=shell(touch)'],
    });
    expect(run.code, context).toBe(0);
    expect(existsSync(join(project, 'held')), 'the denied command did not run').toBe(false);
    expect(existsSync(join(project, 'ran'))).toBe(true);
    const stamp = (text: string) =>
      text.replace(/<current_datetime>[^<]*<\/current_datetime>/, '<current_datetime/>');
    expect(conversation(turns.at(-1)!).map(({ role, text }) => ({ role, text: stamp(text) }))).toEqual([
      { role: 'user', text: 'CONTEXT-FROM-SESSION-START' },
      {
        role: 'user',
        text: '<current_datetime/>\n\nDo the task\n\n<system_reminder>\nCONTEXT-FROM-PROMPT\n</system_reminder>',
      },
      { role: 'assistant', text: '' },
      { role: 'tool', text: `Denied by preToolUse hook: ${reason}` },
      { role: 'assistant', text: '' },
      {
        role: 'tool',
        text: '\n<shellId: 0 completed with exit code 0>\n\nTool "bash" succeeded. Additional guidance from postToolUse hooks:\nCONTEXT-FROM-POST-TOOL',
      },
      { role: 'user', text: 'Additional context from preToolUse hook:\nCONTEXT-FROM-PRE-TOOL' },
    ]);
  });

  it('holds a stop: the reason comes back as the next prompt, stop_hook_active is true on repeats, and the 9th hold is overridden', async () => {
    const { project } = await pulseProject();
    const hooks = await recordingHooks(project);
    await hooks.answer('agentStop', { output: { decision: 'block', reason: 'pulse: a replan is pending' } });
    const steps: Step[] = Array.from({ length: 12 }, (_, index) => () => `Stopping, try ${index + 1}.`);
    const { run, turns, home, context } = await copilotScripted(project, steps);
    expect(run.code, context).toBe(0);
    const stops = await hooks.inputs('agentStop');
    expect(stops.map((input) => input.stop_hook_active)).toEqual([false, ...Array(8).fill(true)]);
    expect(turns, context).toHaveLength(9);
    const prompts = conversation(turns.at(-1)!).filter(({ role }) => role === 'user');
    expect(prompts).toHaveLength(9);
    expect(prompts[1]!.text).toMatch(
      /^<current_datetime>[^<]+<\/current_datetime>\n\npulse: a replan is pending$/,
    );
    // Each hold is a new prompt, so userPromptSubmitted runs again with the reason as the prompt.
    const submitted = await hooks.inputs('userPromptSubmitted');
    expect(submitted.map((input) => input.prompt)).toEqual([
      'Do the task',
      ...Array(8).fill('pulse: a replan is pending'),
    ]);
    await fixture('agentStop-stop_hook_active-true', stops[1], project, home);
    await fixture('userPromptSubmitted-after-hold', submitted[1], project, home);
  });

  it('gives a gpt-5 model apply_patch (a free-form tool) and rg, and passes the patch text itself as toolArgs', async () => {
    const { project } = await pulseProject();
    const hooks = await recordingHooks(project, ['preToolUse']);
    await hooks.answer('preToolUse', {
      output: { permissionDecision: 'deny', permissionDecisionReason: 'not now' },
    });
    const patch = `*** Begin Patch\n*** Add File: ${join(project, 'new.txt')}\n+hi\n*** Update File: README.md\n@@\n-hello world\n+goodbye world\n*** End Patch\n`;
    const steps: Step[] = [() => [{ name: 'apply_patch', input: patch, id: 'c-patch' }], () => 'Done.'];
    const { run, turns, home, context } = await copilotScripted(project, steps, {
      args: ['--allow-tool=write'],
      env: { COPILOT_MODEL: 'gpt-5.5' },
    });
    expect(run.code, context).toBe(0);
    const offered = (turns[0]!.tools ?? []).map((tool) => [
      tool.type,
      tool.custom?.name ?? tool.function.name,
    ]);
    expect(offered).toEqual(
      expect.arrayContaining([
        ['custom', 'apply_patch'],
        ['function', 'rg'],
      ]),
    );
    expect(offered.map(([, name]) => name)).not.toEqual(expect.arrayContaining(['create']));
    expect(conversation(turns.at(-1)!).find(({ role }) => role === 'tool')?.text).toBe(
      'Denied by preToolUse hook: not now',
    );
    const [input] = await hooks.inputs('preToolUse');
    expect(input?.toolArgs).toBe(patch);
    await fixture('preToolUse-apply_patch', input, project, home);
  });

  it('in an untrusted folder loads neither .github/hooks nor .mcp.json, and says nothing about it', async () => {
    const { project } = await pulseProject();
    const hooks = await recordingHooks(project);
    const steps: Step[] = [() => 'Nothing to do.'];
    const { run, turns, context } = await copilotScripted(project, steps, { trusted: false });
    expect(run.code, context).toBe(0);
    expect((turns[0]!.tools ?? []).map((tool) => tool.function.name)).not.toContain(
      'pulse-pulse_should_interrupt',
    );
    expect(await hooks.inputs('sessionStart')).toEqual([]);
    expect(await hooks.inputs('agentStop')).toEqual([]);
    expect(run.stdout + run.stderr).not.toMatch(/trust|hooks|mcp\.json/i);

    // `--trust-folder` opens both for this one run, without saving the trust.
    const once = await copilotScripted(project, [() => 'Nothing to do.'], {
      trusted: false,
      args: ['--trust-folder'],
    });
    expect(once.run.code, once.context).toBe(0);
    expect((once.turns[0]!.tools ?? []).map((tool) => tool.function.name)).toContain(
      'pulse-pulse_should_interrupt',
    );
    expect(await hooks.inputs('sessionStart')).toHaveLength(1);
  });

  it('denies a pulse tool nobody pre-approved in -p, unless a permissionRequest hook allows it', async () => {
    const { project } = await pulseProject();
    const hooks = await recordingHooks(project);
    const steps: Step[] = [() => [call('pulse-pulse_should_interrupt', {}, 'c-interrupt')], () => 'Done.'];
    const denied = await copilotScripted(project, steps, { args: [] });
    expect(denied.run.code, denied.context).toBe(0);
    const deniedOutput = conversation(denied.turns.at(-1)!).find(({ role }) => role === 'tool')?.text;
    expect(deniedOutput).toBe(
      'Permission denied because no interactive user response was available. Retry in an interactive session so the user can approve it, or try an alternative that does not require this permission.',
    );

    await hooks.answer('permissionRequest', { output: { behavior: 'allow' } });
    const allowed = await copilotScripted(project, steps, { args: [] });
    const allowedOutput = conversation(allowed.turns.at(-1)!).find(({ role }) => role === 'tool')?.text ?? '';
    expect(JSON.parse(allowedOutput).agent_id, allowed.context).toMatch(/^handle:/);
    const asked = await hooks.inputs('permissionRequest');
    expect(asked.map((input) => input.toolName)).toEqual([
      'pulse/pulse_should_interrupt',
      'pulse/pulse_should_interrupt',
    ]);
  });

  it('denies the call when the preToolUse hook exits 2 or 1, and lets it run when the hook times out', async () => {
    const { project } = await pulseProject();
    const steps = (file: string): Step[] => [
      () => [call('bash', { command: `touch ${file}`, description: 'Touch' }, 'c-touch')],
      () => 'Done.',
    ];
    const toolText = (turns: ChatBody[]) =>
      conversation(turns.at(-1)!).find(({ role }) => role === 'tool')?.text;
    const args = ['--allow-tool=shell(touch)'];

    const exit2 = await recordingHooks(project, ['preToolUse']);
    await exit2.answer('preToolUse', { output: { permissionDecision: 'allow' }, exit: 2 });
    const two = await copilotScripted(project, steps('two'), { args });
    expect(toolText(two.turns), two.context).toBe('Denied by preToolUse hook: hook exited with code 2');
    expect(existsSync(join(project, 'two'))).toBe(false);

    const exit1 = await recordingHooks(project, ['preToolUse']);
    await exit1.answer('preToolUse', { exit: 1 });
    const one = await copilotScripted(project, steps('one'), { args });
    expect(toolText(one.turns), one.context).toBe(
      'Denied by preToolUse hook from ".github/hooks/recording.json" (hook errored)',
    );
    expect(existsSync(join(project, 'one'))).toBe(false);

    const slow = await recordingHooks(project, ['preToolUse'], 1);
    await slow.answer('preToolUse', {
      output: { permissionDecision: 'deny', permissionDecisionReason: 'late' },
      sleepSeconds: 3,
    });
    const late = await copilotScripted(project, steps('late'), { args });
    expect(late.run.code, late.context).toBe(0);
    expect(existsSync(join(project, 'late')), 'a timed-out hook fails open').toBe(true);
  });
});
