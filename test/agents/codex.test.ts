import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/commands/doctor.js';
import { PULSE_TOOLS } from '../../src/hooks/pulse-tools.js';
import { AGENT_RULE } from '../../src/mcp/agent-rule.js';
import { EXTERNAL_FRAMING } from '../../src/mcp/external-section.js';
import { oneShot, readEvents, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';
import { userEdits } from './cli-process.js';
import { codexConfig, makeCodexHome } from './codex.js';
import {
  execScripted,
  pulseHookCommand,
  recordHookInputs,
  runHookCommand,
  setUpProject,
} from './codex-project.js';
import { listHooks, reviewHooks, trustProject } from './codex-trust.js';
import type { FunctionCall, InputItem, ModelRequest, ResponsesBody, Step } from './openai-model.js';

/*
 * The real Codex CLI (0.171.0, `codex exec`) in a project set up by `pulse setup codex --write`,
 * beside a real `pulse start`; only the model is scripted. The user has trusted the project and
 * reviewed its hooks, as Codex asks before it runs either. Each test reads, turn by turn, what
 * Codex sent the model back.
 */

/** The hook inputs Codex 0.171.0 sent, captured (project path `/PROJECT`). */
const FIXTURES = fileURLToPath(new URL('../fixtures/hooks/codex-0.171.0/', import.meta.url));

/** The part of `GET /status` these tests read. */
interface Status {
  gate: { delivery: unknown };
}

const started = trackStarted();

afterEach(() => started.cleanUp());

/** A call of one of pulse's MCP tools, as Codex offers them: function `<tool>` in namespace `mcp__pulse`. */
const pulseTool = (name: string, args: Record<string, unknown> = {}, call_id?: string): FunctionCall => ({
  type: 'function_call',
  namespace: 'mcp__pulse',
  name,
  arguments: args,
  ...(call_id === undefined ? {} : { call_id }),
});

/** Codex's shell tool (`exec_command`), the one the model is offered for commands. */
const shell = (cmd: string, call_id: string): FunctionCall => ({
  type: 'function_call',
  name: 'exec_command',
  arguments: { cmd },
  call_id,
});

const textsOf = (item: InputItem): string[] =>
  typeof item.content === 'string' ? [item.content] : (item.content ?? []).flatMap((part) => part.text ?? []);

/** Every message text of a request's input, with its role, in order. */
const messages = (body: ResponsesBody) =>
  body.input
    .filter((item) => item.type === 'message')
    .flatMap((item) => textsOf(item).map((text) => ({ role: item.role, text })));

/** The stop hook's reasons Codex passed the model, as user messages `<hook_prompt …>REASON</hook_prompt>`. */
const hookPrompts = (body: ResponsesBody) =>
  messages(body)
    .filter(({ role, text }) => role === 'user' && text.startsWith('<hook_prompt'))
    .map(({ text }) => text);

/** How many times `needle` occurs in the text. */
const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

/** The event id in one of pulse's hold or stop reasons ("… (event evt_…; the user changed …"). */
const eventIn = (reason: string | undefined) => /event (evt_\S+?)[;)]/.exec(reason ?? '')?.[1];

describe.skipIf(!process.env.PULSE_AGENT_SUITE)('pulse with the real Codex CLI (codex exec)', () => {
  it("offers pulse's server to the model under mcp__pulse, with pulse's instructions and its three tools", async () => {
    const { project } = await setUpProject(started, 'pulse-codex-offer-');
    const steps: Step[] = [
      () => [{ type: 'tool_search_call', query: 'pulse', call_id: 'search' }],
      () => 'Nothing to do.',
    ];
    const { run, model, context } = await execScripted(started, project, steps, 'What can pulse do?');
    expect(run.code, context).toBe(0);

    // Codex defers MCP tools: the first request names the namespace and the server's instructions
    // (cut short) in a developer message, not in `tools`.
    const [first, second] = model.turns();
    const tools = messages(first!).find(({ text }) => text.startsWith('<tools>'));
    const line = tools?.text.split('\n').find((text) => text.startsWith('- mcp__pulse: '));
    expect(tools?.role, 'a developer <tools> message').toBe('developer');
    const offered = line?.slice('- mcp__pulse: '.length).replace(/\.\.\.$/, '') ?? '';
    expect(offered.length, line).toBeGreaterThan(80);
    expect(AGENT_RULE.startsWith(offered), line).toBe(true);

    // A tool search returns the namespace whole: the instructions, and pulse's tools.
    const found = second!.input.find((item) => item.type === 'tool_search_output') as
      | (InputItem & { tools: Array<{ name: string; description: string; tools: Array<{ name: string }> }> })
      | undefined;
    const pulse = found?.tools.find((tool) => tool.name === 'mcp__pulse');
    expect(pulse?.description).toBe(AGENT_RULE);
    expect(pulse?.tools.map((tool) => tool.name).sort()).toEqual([...PULSE_TOOLS].sort());
  });

  it('holds a shell command while a replan is pending, runs reads, the plan edit and the ack, then the command', async () => {
    const { project } = await setUpProject(started, 'pulse-codex-');

    // What the model saw after each step, by call id, and the event id it picked up from a hold.
    const outputs: Record<string, string | undefined> = {};
    let eventId = '';
    const saw = (request: ModelRequest, callId: string) => {
      outputs[callId] = request.outputOf(callId);
      return outputs[callId];
    };
    const guidance = '# Guidance\n\nUse the new API everywhere.\n';
    const steps: Step[] = [
      () => [pulseTool('pulse_should_interrupt', {}, 'check-in')],
      async (request) => {
        saw(request, 'check-in');
        // The user changes their mind; the very next call must be held (no waiting for the log).
        await writeFile(join(project, '.pulse', 'guidance.md'), guidance);
        return [shell('touch src-file', 'touch-held')];
      },
      (request) => {
        eventId = eventIn(saw(request, 'touch-held')) ?? '';
        return [shell('cat .pulse/guidance.md', 'read-guidance')];
      },
      async (request) => {
        saw(request, 'read-guidance');
        const last = (await readFile(join(project, '.pulse', 'plan.md'), 'utf8')).trimEnd().split('\n').pop();
        const patch = `*** Begin Patch\n*** Update File: .pulse/plan.md\n@@\n ${last}\n+\n+- Follow the new guidance: use the new API.\n*** End Patch\n`;
        return [{ type: 'custom_tool_call', name: 'apply_patch', input: patch, call_id: 'plan-edit' }];
      },
      (request) => {
        saw(request, 'plan-edit');
        return [pulseTool('pulse_ack_replan', { event_id: eventId }, 'ack')];
      },
      (request) => {
        saw(request, 'ack');
        return [shell('touch src-file', 'touch-again')];
      },
      (request) => {
        saw(request, 'touch-again');
        return 'Done: the plan follows the new guidance.';
      },
    ];
    const { run, model, reviewed, context } = await execScripted(
      started,
      project,
      steps,
      'Add src-file to the project.',
    );
    const details = `${context}\n${JSON.stringify(outputs, null, 2)}`;
    expect(reviewed.map((hook) => hook.eventName).sort()).toEqual(
      ['postToolUse', 'preToolUse', 'sessionStart', 'stop', 'userPromptSubmit'].sort(),
    );
    expect(run.timedOut, details).toBe(false);
    expect(model.errors, details).toEqual([]);

    const guidanceEvent = (await readEvents(project)).findLast((event) => event.path.endsWith('guidance.md'));
    expect.soft(outputs['check-in'], 'pulse_should_interrupt ran').toContain('"needs_replan":false');
    expect
      .soft(outputs['touch-held'], 'touch held by the PreToolUse hook')
      .toContain(`pulse: a replan is pending (event ${guidanceEvent?.id}`);
    expect
      .soft(outputs['read-guidance'], 'a read runs while pending')
      .toContain('Use the new API everywhere.');
    expect.soft(outputs['plan-edit'], 'editing .pulse/plan.md runs while pending').toContain('Success.');
    expect.soft(outputs.ack, 'pulse_ack_replan accepted').toContain('"accepted":true');
    expect.soft(outputs['touch-again'], 'touch runs after the ack').toContain('Process exited with code 0');
    expect.soft(existsSync(join(project, 'src-file')), 'src-file exists').toBe(true);
    expect.soft(model.overruns, 'no turn past the script (a stop held again)').toBe(0);
    expect(run.code, details).toBe(0);
  });

  it('holds a stop once per pending event: two replans in one prompt hold two stops, the third stop goes', async () => {
    const { project, daemon } = await setUpProject(started, 'pulse-codex-stops-');
    const stopInputs = await recordHookInputs(project, 'Stop');
    const logged: string[] = [];
    let ack: string | undefined;
    const steps: Step[] = [
      () => [pulseTool('pulse_should_interrupt', {}, 'check-in')],
      async () => {
        logged.push(await userEdits(project, 'guidance.md', '# Guidance\n\nUse the new API.\n'));
        return 'Done.';
      },
      // Held: the model acknowledges the event the stop hook named.
      (request) => [
        pulseTool('pulse_ack_replan', { event_id: eventIn(hookPrompts(request.body).at(-1)) }, 'ack'),
      ],
      async (request) => {
        ack = request.outputOf('ack');
        logged.push(await userEdits(project, 'constraints.md', '# Constraints\n\nNo network calls.\n'));
        return 'Done again.';
      },
      // Held again, for the new event: this time the model stops without acknowledging it.
      () => 'Stopping here; the constraints can wait.',
    ];
    const { run, model, context } = await execScripted(started, project, steps, 'Tidy the project.');
    expect(run.timedOut, context).toBe(false);
    expect(model.errors, context).toEqual([]);

    const prompts = hookPrompts(model.turns().at(-1)!);
    expect(prompts.map(eventIn), context).toEqual(logged);
    expect(prompts[0]).toContain('the user changed .pulse/guidance.md');
    expect(prompts[1]).toContain('the user changed .pulse/constraints.md');
    expect(ack, 'the ack of the first event').toContain('"accepted":true');
    // Codex keeps stop_hook_active true once a stop of the prompt was held: pulse goes by the event.
    const stops = await stopInputs();
    expect(stops.map((input) => input.stop_hook_active)).toEqual([false, true, true]);
    expect(new Set(stops.map((input) => input.turn_id)).size, 'all in one prompt').toBe(1);
    expect(model.overruns, 'no model request past the third stop').toBe(0);
    expect(run.code, context).toBe(0);
    const check = await oneShot(daemon.url, 'tools/call', { name: 'pulse_should_interrupt', arguments: {} });
    expect(check.body.result?.structuredContent?.pending_replan_event_id, 'still pending').toBe(logged[1]);
  });

  it('lets every call and stop through when the daemon is down, and says so in one line', async () => {
    const { project, daemon } = await setUpProject(started, 'pulse-codex-down-');
    const preToolInputs = await recordHookInputs(project, 'PreToolUse');
    await daemon.stop();
    let touched: string | undefined;
    const steps: Step[] = [
      () => [shell('touch made-while-down', 'touch')],
      (request) => {
        touched = request.outputOf('touch');
        return 'Done.';
      },
    ];
    const { run, model, context } = await execScripted(started, project, steps, 'Add made-while-down.');
    expect(run.code, context).toBe(0);
    expect(touched, 'the command ran, not blocked').toEqual(
      expect.stringContaining('Process exited with code 0'),
    );
    expect(existsSync(join(project, 'made-while-down'))).toBe(true);
    expect(model.overruns, 'the stop went').toBe(0);
    expect(await preToolInputs(), 'the hooks ran').toEqual([
      expect.objectContaining({ tool_name: 'Bash', tool_input: { command: 'touch made-while-down' } }),
    ]);

    // Codex's exec shows a hook's systemMessage nowhere: run pulse's hooks by hand, as Codex does.
    const line = `pulse: the daemon is not running at 127.0.0.1:${daemon.port} for ${project}; not enforcing replans. Start it with: pulse start -p ${project} --port ${daemon.port}`;
    for (const [event, fixture] of [
      ['PreToolUse', 'PreToolUse-Bash.json'],
      ['Stop', 'Stop-stop_hook_active-false.json'],
    ]) {
      const input = (await readFile(join(FIXTURES, fixture!), 'utf8')).replaceAll('/PROJECT', project);
      const printed = runHookCommand(await pulseHookCommand(project, event!), input);
      expect(printed, event).toEqual({
        code: 0,
        stdout: `${JSON.stringify({ systemMessage: line })}\n`,
        stderr: `${line}\n`,
      });
    }
  });

  it('tells the model the titles of external events once, as facts, and takes its check-in and ack', async () => {
    const titles = ['Standup moved to 10:30', 'Deploy freeze from 16:00'];
    const { project, daemon } = await setUpProject(started, 'pulse-codex-news-', async (dir) => {
      const cal = await fixtureFiles(dir, 'cal', {
        items: titles.map((title, i) => ({ id: `cal-${i}`, title })),
      });
      await writeFile(join(dir, 'README.md'), '# A project\n');
      await mkdir(join(dir, '.pulse'));
      await saveSources(
        dir,
        JSON.stringify({
          mcpServers: { cal: fixtureCommand(cal.args) },
          sources: [{ name: 'cal', server: 'cal', tool: 'list_events', interval_sec: 300 }],
        }),
      );
    });
    await waitUntil(
      async () =>
        ((await (await fetch(new URL('/status', daemon.url))).json()) as Status).gate.delivery !== null,
      { timeoutMs: 15_000, describe: () => 'a delivery set aside for the agents' },
    );

    const outputs: Record<string, string | undefined> = {};
    let last: ModelRequest | undefined;
    const steps: Step[] = [
      () => [shell('cat README.md', 'read-1')],
      () => [shell('ls', 'read-2')],
      () => [pulseTool('pulse_should_interrupt', {}, 'check-in')],
      (request) => {
        outputs['check-in'] = request.outputOf('check-in');
        const delivery_id = /"delivery_id":"([^"]+)"/.exec(outputs['check-in'] ?? '')?.[1];
        return [pulseTool('pulse_ack_events', { delivery_id }, 'ack')];
      },
      (request) => {
        outputs.ack = request.outputOf('ack');
        last = request;
        return 'Told the user: the standup moved to 10:30, and a deploy freeze starts at 16:00.';
      },
    ];
    const { run, model, context } = await execScripted(started, project, steps, 'Look around the project.');
    expect(run.code, context).toBe(0);
    expect(model.errors, context).toEqual([]);

    // The whole conversation is in the last request: each title was told once, in a developer
    // message that frames them as facts, though four hooks (start, prompt, two reads) could tell.
    const conversation = messages(last!.body);
    const all = conversation.map(({ text }) => text).join('\n');
    for (const title of titles) expect(occurrences(all, `[cal] "${title}"`), title).toBe(1);
    const told = conversation.filter(({ text }) => text.includes(`[cal] "${titles[0]}"`));
    expect(told, context).toEqual([{ role: 'developer', text: expect.stringContaining(EXTERNAL_FRAMING) }]);
    expect(outputs['check-in']).toContain('"needs_attention":true');
    expect(outputs.ack).toContain('"accepted":true');
    expect(model.overruns).toBe(0);
  });

  it('pulse doctor and pulse setup say what Codex itself says of trust and hook review, at each step', async () => {
    const project = await realpath(await tempProject('pulse-codex-gates-'));
    started.projects.push(project);
    execFileSync('git', ['init', '-q', project]);
    const daemon = await startDaemon(project);
    started.daemons.push(daemon);
    const home = await makeCodexHome(codexConfig('http://127.0.0.1:9/v1'));
    started.projects.push(home.home);
    const env = { CODEX_HOME: home.codexHome };
    const setup = (...args: string[]) =>
      runCli(['setup', 'codex', '--write', '-p', project, '--port', String(daemon.port), ...args], { env });
    /** What pulse doctor says of Codex, and what Codex's own app server says of pulse's hooks. */
    const both = async () => {
      const { stdout } = await runCli(['doctor', '-p', project, '--json'], { env });
      const codex = (JSON.parse(stdout) as DoctorReport).findings.filter(
        (f) => f.subject === 'codex' && !f.message.startsWith('set up for port'),
      );
      const listed = await listHooks(home, project);
      return { codex, listed: Object.fromEntries(listed.map((hook) => [hook.eventName, hook.trustStatus])) };
    };

    const first = await setup();
    expect(first.code, first.stdout).toBe(0);
    expect(first.stdout).toContain(`Codex does not trust ${project} yet`);
    let now = await both();
    // Untrusted: Codex lists none of the project's hooks at all.
    expect(now.listed).toEqual({});
    expect(now.codex).toEqual([
      expect.objectContaining({ ok: false, message: expect.stringContaining('does not trust') }),
    ]);

    await trustProject(home, project);
    now = await both();
    const EVENTS = ['sessionStart', 'userPromptSubmit', 'preToolUse', 'postToolUse', 'stop'];
    expect(now.listed).toEqual(Object.fromEntries(EVENTS.map((event) => [event, 'untrusted'])));
    expect(now.codex).toEqual([
      expect.objectContaining({
        ok: false,
        message: expect.stringMatching(
          /^Codex will not run 5 of pulse's hooks until you review them: SessionStart \(new\), .*skips them without a word/,
        ),
        fix: expect.stringContaining('"Trust all and continue"'),
      }),
    ]);

    await reviewHooks(home, project);
    now = await both();
    expect(now.listed).toEqual(Object.fromEntries(EVENTS.map((event) => [event, 'trusted'])));
    expect(now.codex).toEqual([
      {
        subject: 'codex',
        ok: true,
        message: `Codex trusts ${project} and will run pulse's 5 reviewed hooks`,
      },
    ]);
    const rerun = await setup();
    expect(rerun.stdout).toContain('Already set up');
    expect(rerun.stdout).not.toContain('will not use all of this yet');

    // Hooks for another transport are other commands: Codex wants them reviewed again, and both say so.
    const moved = await setup('--hooks', 'node');
    expect(moved.code, moved.stdout).toBe(0);
    expect(moved.stdout).toContain('Codex will not run 5 of pulse');
    now = await both();
    expect(now.listed).toEqual(Object.fromEntries(EVENTS.map((event) => [event, 'modified'])));
    expect(now.codex[0]!.message).toContain('PreToolUse (changed since review)');
  });
});
