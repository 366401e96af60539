import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PULSE_TOOLS } from '../../src/hooks/pulse-tools.js';
import { AGENT_RULE } from '../../src/mcp/agent-rule.js';
import { EXTERNAL_FRAMING } from '../../src/mcp/external-section.js';
import { oneShot, runCli, setupWithAutostart, waitForDelivery } from '../support/daemon.js';
import { recordedDaemon } from '../support/daemon-record.js';
import { calendarSource } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import {
  allText,
  contextText,
  type ScriptedModel,
  type Step,
  startAnthropicModel,
  stopFeedback,
  type Turn,
  toolCalls,
  toolResults,
} from './anthropic-model.js';
import { inAgentSuite, NO_VERDICT, notices, runClaude } from './claude.js';
import { userEdits } from './cli-process.js';
import { type HookServer, startHookServer } from './hook-server.js';
import {
  addUserHook,
  freePort,
  pulseProjectFor,
  pulseProjectForClaude,
  tempGitProject,
} from './pulse-project.js';

/*
 * The replan interrupt with the real Claude Code: a real daemon, `pulse setup claude --write` as
 * the README says, `claude -p` with no permission flag, and only the model scripted. What runs,
 * what is held and what the model reads back are all taken from the requests Claude Code sends.
 */

const started = trackStarted();
const closers: Array<ScriptedModel | HookServer> = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((server) => server.close()));
  await started.cleanUp();
});

const use = (name: string, input: unknown): Turn => [{ type: 'tool_use', name, input }];
const say = (text: string): Turn => [{ type: 'text', text }];

const model = async (script: Step[]) => {
  const started = await startAnthropicModel({ script });
  closers.push(started);
  return started;
};

/** The user edits the guidance, and pulse logs it: the id of the replan that is now pending. */
const editGuidance = (project: string) =>
  userEdits(project, 'guidance.md', '# Guidance\n\nUse the new API.\n');

/** The event id in one of pulse's hold or stop reasons ("… (event evt_…; the user changed …"). */
const eventIn = (reason: string | undefined) => /event (evt_\S+?)[;)]/.exec(reason ?? '')?.[1];

/** How many times `needle` occurs in the text. */
const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

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

  it('sends $PULSE_TOKEN to a daemon that requires one, from .mcp.json and its HTTP hooks alike', async () => {
    const token = 'f00dfeedf00dfeedf00dfeedf00dfeed';
    const { project } = await pulseProjectFor(started, 'claude', { daemonEnv: { PULSE_TOKEN: token } });
    const agent = await model([
      () => use('mcp__pulse__pulse_should_interrupt', {}),
      async () => {
        await editGuidance(project);
        return use('Bash', { command: 'touch src-file', description: 'Create src-file' });
      },
      () => say('Held.'),
      // The stop is held once too: the replan is still pending.
      () => say('Still held.'),
    ]);

    const run = await runClaude({
      project,
      modelUrl: agent.url,
      prompt: 'Carry on.',
      userSettings,
      env: { PULSE_TOKEN: token },
    });

    expect(agent.problems).toEqual([]);
    const [check, held] = toolCalls(agent.turns().at(-1)!);
    // Without the token in .mcp.json's header the server fails to connect, and there is no pulse tool.
    expect(JSON.parse(check!.result!)).toMatchObject({ needs_replan: false });
    expect(held!.result).toContain('pulse: a replan is pending');
    expect(existsSync(join(project, 'src-file'))).toBe(false);
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

  it("offers pulse's three tools as deferred tools with pulse's instructions, and ToolSearch loads the schemas pulse serves", async () => {
    const { project, daemon } = await pulseProjectForClaude(started);
    const names = PULSE_TOOLS.map((tool) => `mcp__pulse__${tool}`);
    const agent = await model([
      () => use('ToolSearch', { query: `select:${names.join(',')}` }),
      () => use('mcp__pulse__pulse_should_interrupt', {}),
      () => say('Checked in.'),
    ]);

    const run = await runClaude({ project, modelUrl: agent.url, prompt: 'Check in with pulse.' });
    expect(agent.problems).toEqual([]);
    expect(run.code).toBe(0);

    // 2.1.332 sends no MCP schema up front: it names the deferred tools in a system message, and
    // passes the server's `instructions` under "# MCP Server Instructions".
    const [first, second] = agent.turns();
    const told = contextText(first!);
    const deferred = /deferred tools are now available via ToolSearch[^\n]*\n([\s\S]*?)\n\n/.exec(told)?.[1];
    expect(deferred?.split('\n')).toEqual(expect.arrayContaining(names));
    expect(first!.tools!.filter((tool) => names.includes(tool.name))).toEqual([]);
    expect(told).toContain(
      `# MCP Server Instructions\n\nThe following MCP servers have provided instructions for how to use their tools and resources:\n\n## pulse\n${AGENT_RULE}\n`,
    );

    // ToolSearch answers with references; the next request carries the schemas pulse itself lists.
    const [found] = toolResults(second!);
    expect(found?.content).toEqual(names.map((name) => ({ type: 'tool_reference', tool_name: name })));
    const listed = (await oneShot(daemon.url, 'tools/list')).body.result?.tools as Array<{
      name: string;
      description: string;
      inputSchema: unknown;
    }>;
    const loaded = second!.tools!.filter((tool) => names.includes(tool.name));
    expect(
      Object.fromEntries(
        loaded.map(({ name, description, input_schema }) => [name, { description, input_schema }]),
      ),
    ).toEqual(
      Object.fromEntries(
        listed.map(({ name, description, inputSchema }) => [
          `mcp__pulse__${name}`,
          { description, input_schema: inputSchema },
        ]),
      ),
    );

    // And the check-in runs with no approval.
    const denied = run.events.filter((event) => event.subtype === 'permission_denied');
    expect(denied).toEqual([]);
    const [, check] = toolCalls(agent.turns().at(-1)!);
    expect(check).toMatchObject({ name: 'mcp__pulse__pulse_should_interrupt', isError: false });
    expect(JSON.parse(check!.result!)).toMatchObject({ needs_replan: false });
  });

  it('holds a stop once per pending event: two replans in one prompt hold two stops, and the third stop goes', async () => {
    const { project, daemon } = await pulseProjectForClaude(started);
    // A hook of the user's own beside pulse's, to see what Claude Code tells Stop hooks.
    const stops = await startHookServer(() => ({ body: '' }));
    closers.push(stops);
    await addUserHook(project, 'Stop', `${stops.url}/stop`);
    const logged: string[] = [];
    let afterFirstStop: string[] = [];
    const agent = await model([
      () => use('mcp__pulse__pulse_should_interrupt', {}),
      async () => {
        logged.push(await editGuidance(project));
        return say('Done.');
      },
      // Held: the model acknowledges the event the stop hook named.
      (request) => {
        afterFirstStop = stopFeedback(request);
        return use('mcp__pulse__pulse_ack_replan', { event_id: eventIn(afterFirstStop.at(-1)) });
      },
      async () => {
        logged.push(await userEdits(project, 'constraints.md', '# Constraints\n\nNo network calls.\n'));
        return say('Done again.');
      },
      // Held again, for the new event: this time the model stops without acknowledging it.
      () => say('Stopping here; the constraints can wait.'),
    ]);

    const run = await runClaude({ project, modelUrl: agent.url, prompt: 'Tidy the project.' });

    expect(agent.problems, 'no request past the script: the third stop went').toEqual([]);
    expect(agent.remaining(), 'steps never reached: a stop went that should have been held').toBe(0);
    expect(run.code).toBe(0);
    expect(afterFirstStop.map(eventIn)).toEqual([logged[0]]);
    const feedback = stopFeedback(agent.turns().at(-1)!);
    expect(feedback.map(eventIn)).toEqual(logged);
    expect(feedback[0]).toContain('the user changed .pulse/guidance.md');
    expect(feedback[1]).toContain('the user changed .pulse/constraints.md');
    expect(feedback[1]).toContain(`call pulse_ack_replan with event_id "${logged[1]}"`);
    const ack = toolCalls(agent.turns().at(-1)!).find((call) => call.name.endsWith('pulse_ack_replan'));
    expect(JSON.parse(ack!.result!)).toMatchObject({ accepted: true, acknowledged_event_id: logged[0] });
    // Claude keeps stop_hook_active true once a stop of the prompt was held: pulse goes by the event.
    expect(stops.calls.map((call) => call.body.stop_hook_active)).toEqual([false, true, true]);
    expect(new Set(stops.calls.map((call) => call.body.prompt_id)).size, 'all in one prompt').toBe(1);
    expect(notices(run)).toEqual([
      `Stop says: pulse: replan ${logged[1]} is still pending: the agent stopped without acknowledging it.`,
    ]);
    const check = await oneShot(daemon.url, 'tools/call', { name: 'pulse_should_interrupt', arguments: {} });
    expect(check.body.result?.structuredContent?.pending_replan_event_id, 'still pending').toBe(logged[1]);
  });

  it('with --autostart, a session start with no daemon starts it, and the first tool call is held while a replan is pending', async () => {
    const project = await tempGitProject(started);
    const port = await freePort();
    await setupWithAutostart('claude', project, port);
    // The user changed the guidance while no daemon ran: pulse logs it when it starts.
    expect((await runCli(['init', '-p', project])).code).toBe(0);
    await writeFile(join(project, '.pulse', 'guidance.md'), '# Guidance\n\nUse the new API.\n');
    const touch = use('Bash', { command: 'touch src-file', description: 'Create src-file' });
    const agent = await model([() => touch, () => say('Held; I will replan.'), () => say('Noted.')]);

    // Claude Code's HOME is the daemon's too: its record lies in that HOME's state folder.
    const home = await mkdtemp(join(tmpdir(), 'pulse-claude-home-'));
    started.projects.push(home);
    const asThatUser = { HOME: home };
    try {
      const run = await runClaude({ project, modelUrl: agent.url, prompt: 'Carry on.', userSettings, home });

      const running = recordedDaemon(project, asThatUser);
      expect(running.port).toBe(port);
      expect(agent.problems).toEqual([]);
      const [held] = toolCalls(agent.turns()[1]!);
      expect(held).toMatchObject({ name: 'Bash', isError: true });
      expect(held!.result).toContain('pulse: a replan is pending (event ');
      expect(existsSync(join(project, 'src-file'))).toBe(false);
      // The session start told the model too, before its first turn.
      expect(contextText(agent.turns()[0]!)).toContain('a replan is pending');
      expect(run.code).toBe(0);
    } finally {
      await runCli(['stop', '-p', project], { env: asThatUser });
    }
  });

  it('lets every call and the stop through when the daemon is down, and Claude Code warns once, at the first call', async () => {
    const { project, daemon } = await pulseProjectForClaude(started);
    await daemon.stop();
    const touch = (file: string, id: string): Turn => [
      {
        type: 'tool_use',
        id,
        name: 'Bash',
        input: { command: `touch ${file}`, description: `Create ${file}` },
      },
    ];
    const agent = await model([
      () => touch('made-while-down', 'toolu_touch_1'),
      () => use('Read', { file_path: join(project, 'CLAUDE.md') }),
      () => touch('made-while-down-too', 'toolu_touch_2'),
      () => say('Done.'),
    ]);

    const run = await runClaude({
      project,
      modelUrl: agent.url,
      prompt: 'Add the files.',
      userSettings: {
        permissions: { allow: ['Bash(touch made-while-down)', 'Bash(touch made-while-down-too)'] },
      },
    });

    expect(agent.problems, 'no request past the script: the stop went').toEqual([]);
    expect(agent.remaining(), 'steps never reached: something was blocked').toBe(0);
    expect(run.code).toBe(0);
    const [first, read, second] = toolCalls(agent.turns().at(-1)!);
    expect(first).toMatchObject({ name: 'Bash', isError: false, result: '(Bash completed with no output)' });
    expect(read).toMatchObject({ name: 'Read', isError: false });
    expect(second).toMatchObject({ name: 'Bash', isError: false, result: '(Bash completed with no output)' });
    expect(existsSync(join(project, 'made-while-down'))).toBe(true);
    expect(existsSync(join(project, 'made-while-down-too'))).toBe(true);
    // What a -p user sees: one warning, at the first call, though every hook of the run failed
    // (2.1.332 sends it "once per hook in a session, for the first such call"), and one about the stop.
    expect(notices(run)).toEqual([NO_VERDICT]);
    const unchecked = run.events.flatMap((event) =>
      event.tag === 'hook_no_verdict' ? [event.hook_no_verdict] : [],
    );
    expect(unchecked).toEqual([{ hook_event: 'PreToolUse', tool_use_id: 'toolu_touch_1', timed_out: false }]);
    const shown = run.events.filter((event) => event.subtype === 'notification');
    expect(shown.map(({ key, text }) => ({ key, text }))).toEqual([
      { key: 'stop-hook-error', text: 'stop hook problem · ctrl+o to see' },
    ]);
    expect(run.stderr).toBe('');
  });

  it('tells the model the titles of external events once, as facts, though every prompt and read could, and takes its check-in and ack', async () => {
    const titles = ['Standup moved to 10:30', 'Deploy freeze from 16:00'];
    const { project, daemon } = await pulseProjectForClaude(started, async (dir) => {
      await calendarSource(dir, titles);
      await writeFile(join(dir, 'README.md'), '# A project\n');
    });
    await waitForDelivery(daemon);
    const readme = () => use('Read', { file_path: join(project, 'README.md') });
    const agent = await model([
      readme,
      readme,
      readme,
      () => use('mcp__pulse__pulse_should_interrupt', {}),
      (request) => {
        const checkIn = toolCalls(request).at(-1)?.result ?? '';
        return use('mcp__pulse__pulse_ack_events', { delivery_id: JSON.parse(checkIn).delivery_id });
      },
      () => say('Told the user: the standup moved to 10:30, and a deploy freeze starts at 16:00.'),
    ]);

    const run = await runClaude({ project, modelUrl: agent.url, prompt: 'Look around the project.' });

    expect(agent.problems).toEqual([]);
    expect(agent.remaining()).toBe(0);
    expect(run.code).toBe(0);
    // The whole conversation is in the last request: what hooks told (tool results aside) names
    // each title once, in the one context that frames them as facts.
    const last = agent.turns().at(-1)!;
    const told = contextText(last);
    for (const title of titles) expect(occurrences(told, `[cal] "${title}"`), title).toBe(1);
    expect(occurrences(told, 'hook additional context: pulse: external events need attention.')).toBe(1);
    expect(told).toContain(
      `UserPromptSubmit hook additional context: pulse: external events need attention. ${EXTERNAL_FRAMING}\n- [cal] "${titles[0]}"\n- [cal] "${titles[1]}"\n`,
    );
    const [, , , checkIn, ack] = toolCalls(last);
    expect(JSON.parse(checkIn!.result!)).toMatchObject({ needs_attention: true });
    expect(JSON.parse(ack!.result!)).toMatchObject({ accepted: true });
  });
});
