import { existsSync } from 'node:fs';
import { readFile, realpath, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/commands/doctor.js';
import { PULSE_TOOLS } from '../../src/hooks/pulse-tools.js';
import { AGENT_RULE, AGENT_RULE_LINES } from '../../src/mcp/agent-rule.js';
import { EXTERNAL_FRAMING } from '../../src/mcp/external-section.js';
import { BIN, oneShot, runCli, startDaemon, waitForDelivery } from '../support/daemon.js';
import { recordedDaemon } from '../support/daemon-record.js';
import { calendarSource } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { inAgentSuite } from './claude.js';
import { userEdits } from './cli-process.js';
import { type GeminiRun, makeGeminiHome } from './gemini.js';
import type { FunctionCall, GeminiBody, ModelRequest, Step } from './gemini-model.js';
import {
  geminiScripted,
  pulseHookCommand,
  pulseProjectForGemini,
  recordHookInputs,
  SETTINGS,
  setUpGemini,
  trustingHome,
} from './gemini-project.js';
import { freePort, readJson, tempGitProject, writeJson } from './pulse-project.js';

/*
 * The real Gemini CLI (0.61.0, `gemini -p … -o stream-json`) in a project set up by `pulse setup
 * gemini --write`, beside a real `pulse start`; only the model is scripted, in the Gemini API. The
 * user's one step, trusting the folder, is done as Gemini's "Trust folder" dialog does it. Each test
 * reads, request by request, what Gemini sent the model back.
 */

const started = trackStarted();
afterEach(() => started.cleanUp());

const call = (name: string, args: Record<string, unknown> = {}): FunctionCall[] => [{ name, args }];

const PULSE_NAMES = PULSE_TOOLS.map((tool) => `mcp_pulse_${tool}`);

/** The JSON pulse answered with, from the text Gemini hands the model (`<untrusted_context>` around it). */
const pulseAnswer = (response: Record<string, unknown> | undefined) =>
  JSON.parse(/\{[\s\S]*\}/.exec(String(response?.output))?.[0] ?? 'null');

/** The event id in one of pulse's hold or stop reasons ("… (event evt_…; the user changed …"). */
const eventIn = (reason: unknown) => /event (evt_\S+?)[;)]/.exec(String(reason ?? ''))?.[1];

/** How many times `needle` occurs in the text. */
const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

/** Everything the model was told in a request: every text part and every tool result, as text. */
const told = (body: GeminiBody) =>
  body.contents
    .flatMap((content) => content.parts)
    .map((part) =>
      part.functionResponse === undefined
        ? (part.text ?? '')
        : Object.values(part.functionResponse.response).map(String).join('\n'),
    )
    .join('\n');

/** The lines Gemini printed for a hook's `systemMessage` (stderr only: stream-json has none). */
const hookMessages = (run: GeminiRun) =>
  run.stderr
    .split('\n')
    .filter((line) => line.startsWith('Hook system message: '))
    .map((line) => line.slice('Hook system message: '.length));

/** The user edits the guidance, and pulse logs it: the id of the replan that is now pending. */
const editGuidance = (project: string) =>
  userEdits(project, 'guidance.md', '# Guidance\n\nUse the new API everywhere.\n');

describe.skipIf(!inAgentSuite)('Gemini CLI 0.61.0, set up by `pulse setup gemini --write`', () => {
  it("offers exactly pulse's three tools with its instructions, and runs the check-in unasked with no approval", async () => {
    const scene = await pulseProjectForGemini(started);
    let checkIn: Record<string, unknown> | undefined;
    const steps: Step[] = [
      () => call('mcp_pulse_pulse_should_interrupt'),
      (request) => {
        checkIn = request.responseTo('mcp_pulse_pulse_should_interrupt');
        return 'The README is tidy.';
      },
    ];
    // The default approval mode: the prompt names no tool; the instructions name pulse's.
    const { run, model, context } = await geminiScripted(started, scene, steps, 'Tidy up the README.', {
      args: [],
    });
    expect(run.code, context).toBe(0);
    expect([model.errors, model.overruns], context).toEqual([[], 0]);

    const first = model.turns()[0]!;
    const offered = (first.tools ?? [])
      .flatMap((tool) => tool.functionDeclarations ?? [])
      .map((fn) => fn.name);
    expect(offered).toEqual(expect.arrayContaining(PULSE_NAMES));
    // pulse's setup grants nothing else: headless Gemini still offers no shell and no write.
    expect(offered).not.toContain('run_shell_command');
    expect(offered).not.toContain('write_file');
    const opening = first.contents[0]!.parts.map((part) => part.text ?? '').join('\n');
    expect(opening).toContain(`---[start of server instructions]---\n${AGENT_RULE}\n`);
    expect(opening).toContain(
      `--- Context from: ${scene.project}/GEMINI.md ---\n<!-- pulse:begin -->\n## pulse\n\n${AGENT_RULE_LINES.join('\n')}\n`,
    );
    expect(pulseAnswer(checkIn)).toMatchObject({ needs_replan: false, needs_attention: false });
    // Project hooks need no review: the first run names them in a warning, and runs them.
    expect(run.stderr).toContain('WARNING: The following project-level hooks have been detected');
    expect(run.stderr).toContain('  - pulse\n');
    expect(hookMessages(run)).toEqual([]);
    // Gemini remembers them by `<name>:<command>`, to warn again only when one changes.
    const remembered = JSON.parse(await readFile(join(scene.home.geminiDir, 'trusted_hooks.json'), 'utf8'));
    expect(remembered[scene.project]).toContain(
      `pulse:${await pulseHookCommand(scene.project, 'BeforeTool')}`,
    );
  });

  it('holds a shell command and its own edits of guidance.md while a replan is pending, runs reads, the plan edit and the ack, then the command', async () => {
    const scene = await pulseProjectForGemini(started);
    const { project } = scene;
    const saw: Record<string, Record<string, unknown> | undefined> = {};
    let pending = '';
    const touch = call('run_shell_command', { command: 'touch src-file', description: 'Create src-file' });
    const steps: Step[] = [
      () => call('mcp_pulse_pulse_should_interrupt'),
      async (request) => {
        saw.checkIn = request.responseTo('mcp_pulse_pulse_should_interrupt');
        pending = await editGuidance(project);
        return touch;
      },
      (request) => {
        saw.held = request.responseTo('run_shell_command');
        return call('replace', {
          file_path: '.pulse/guidance.md',
          instruction: 'Drop the new guidance',
          old_string: 'Use the new API everywhere.',
          new_string: 'Never mind.',
        });
      },
      (request) => {
        saw.replace = request.responseTo('replace');
        return call('write_file', {
          file_path: '.pulse/guidance.md',
          content: '# Guidance\n\nNever mind.\n',
        });
      },
      (request) => {
        saw.overwrite = request.responseTo('write_file');
        return call('read_file', { file_path: '.pulse/guidance.md' });
      },
      (request) => {
        saw.read = request.responseTo('read_file');
        return call('run_shell_command', { command: 'grep -n API .pulse/guidance.md' });
      },
      (request) => {
        saw.grep = request.responseTo('run_shell_command');
        return call('write_file', { file_path: '.pulse/plan.md', content: '# Plan\n\nUse the new API.\n' });
      },
      (request) => {
        saw.plan = request.responseTo('write_file');
        return call('mcp_pulse_pulse_ack_replan', { event_id: eventIn(saw.held?.error) });
      },
      (request) => {
        saw.ack = request.responseTo('mcp_pulse_pulse_ack_replan');
        return touch;
      },
      (request) => {
        saw.work = request.responseTo('run_shell_command');
        return 'Done: the plan follows the new guidance.';
      },
    ];
    const { run, model, context } = await geminiScripted(
      started,
      scene,
      steps,
      'Add src-file to the project.',
    );
    const details = `${context}\n${JSON.stringify(saw, null, 2)}`;
    expect(run.code, details).toBe(0);
    expect([model.errors, model.overruns], details).toEqual([[], 0]);

    expect(pulseAnswer(saw.checkIn)).toMatchObject({ needs_replan: false });
    // What the model reads for a held call: Gemini's "Tool execution blocked: " and pulse's reason;
    // the agent's own edits of the guidance, by `replace` or `write_file`, are held the same way.
    const heldReason = new RegExp(
      `^Tool execution blocked: pulse: a replan is pending \\(event ${pending}; the user changed \\.pulse/guidance\\.md\\)`,
    );
    for (const held of [saw.held, saw.replace, saw.overwrite]) {
      expect(held?.error, details).toMatch(heldReason);
      expect(held?.error).toContain(`call pulse_ack_replan with event_id "${pending}"`);
    }
    expect(await readFile(join(project, '.pulse', 'guidance.md'), 'utf8')).toBe(
      '# Guidance\n\nUse the new API everywhere.\n',
    );
    expect(String(saw.read?.output)).toContain('Use the new API everywhere.');
    expect(String(saw.grep?.output)).toContain('3:Use the new API everywhere.');
    expect(saw.plan?.error).toBeUndefined();
    expect(await readFile(join(project, '.pulse', 'plan.md'), 'utf8')).toBe('# Plan\n\nUse the new API.\n');
    expect(pulseAnswer(saw.ack)).toMatchObject({ accepted: true, acknowledged_event_id: pending });
    expect(saw.work?.error).toBeUndefined();
    expect(existsSync(join(project, 'src-file'))).toBe(true);
  });

  it('holds a stop once per pending event, takes the reason it sends back as no new prompt, and lets the third stop go', async () => {
    const scene = await pulseProjectForGemini(started);
    const { project, daemon } = scene;
    const stops = await recordHookInputs(project, 'AfterAgent');
    const prompts = await recordHookInputs(project, 'BeforeAgent');
    const logged: string[] = [];
    let afterFirstStop: GeminiBody | undefined;
    let ack: Record<string, unknown> | undefined;
    const steps: Step[] = [
      () => call('mcp_pulse_pulse_should_interrupt'),
      async () => {
        logged.push(await editGuidance(project));
        return 'Done.';
      },
      // Held: the model acknowledges the event the stop's reason named.
      (request) => {
        afterFirstStop = request.body;
        return call('mcp_pulse_pulse_ack_replan', { event_id: eventIn(request.texts('user').at(-1)) });
      },
      async (request) => {
        ack = request.responseTo('mcp_pulse_pulse_ack_replan');
        logged.push(await userEdits(project, 'constraints.md', '# Constraints\n\nNo network calls.\n'));
        return 'Done again.';
      },
      // Held again, for the new event: this time the model stops without acknowledging it.
      () => 'Stopping here; the constraints can wait.',
    ];
    const { run, model, context } = await geminiScripted(started, scene, steps, 'Tidy the project.', {
      args: [],
    });
    expect(run.code, context).toBe(0);
    expect([model.errors, model.overruns], context).toEqual([[], 0]);

    // The reason comes back as the whole next user message: BeforeAgent, which fires again with it
    // as its prompt, added nothing (the session was told by the stop).
    const reasons = (await prompts()).map((input) => input.prompt);
    expect(reasons[0]).toBe('Tidy the project.');
    expect(reasons.slice(1).map(eventIn)).toEqual(logged);
    expect(afterFirstStop?.contents.at(-1)).toEqual({ role: 'user', parts: [{ text: reasons[1] }] });
    expect(reasons[1]).toContain('the user changed .pulse/guidance.md');
    expect(reasons[2]).toContain(`call pulse_ack_replan with event_id "${logged[1]}"`);
    const conversation = told(model.turns().at(-1)!);
    for (const event of logged)
      expect(occurrences(conversation, `a replan is pending (event ${event}`)).toBe(1);
    expect(pulseAnswer(ack)).toMatchObject({ accepted: true, acknowledged_event_id: logged[0] });
    expect(run.events.filter((event) => event.type === 'error').map((event) => event.message)).toEqual(
      reasons.slice(1).map((reason) => `Agent execution blocked: ${reason}`),
    );
    // Gemini's stop_hook_active falls back to false after a tool call: pulse goes by the event.
    expect((await stops()).map((input) => input.stop_hook_active)).toEqual([false, false, true]);
    expect(hookMessages(run)).toEqual([
      `pulse: replan ${logged[1]} is still pending: the agent stopped without acknowledging it.`,
    ]);
    const check = await oneShot(daemon.url, 'tools/call', { name: 'pulse_should_interrupt', arguments: {} });
    expect(check.body.result?.structuredContent?.pending_replan_event_id, 'still pending').toBe(logged[1]);
  });

  it('sends $PULSE_TOKEN to a daemon that requires one, from its MCP entry and its hooks alike', async () => {
    const token = 'f00dfeedf00dfeedf00dfeedf00dfeed';
    const project = await realpath(await tempGitProject(started));
    const port = await freePort();
    started.daemons.push(
      await startDaemon(project, { args: ['--port', String(port)], env: { PULSE_TOKEN: token } }),
    );
    await setUpGemini(project, port);
    const home = await trustingHome(started, project);
    const saw: Record<string, Record<string, unknown> | undefined> = {};
    const steps: Step[] = [
      () => call('mcp_pulse_pulse_should_interrupt'),
      async (request) => {
        saw.checkIn = request.responseTo('mcp_pulse_pulse_should_interrupt');
        await editGuidance(project);
        return call('run_shell_command', { command: 'touch src-file' });
      },
      (request) => {
        saw.held = request.responseTo('run_shell_command');
        return 'Held.';
      },
      () => 'Noted.',
    ];
    const { run, model, context } = await geminiScripted(started, { project, home }, steps, 'Carry on.', {
      env: { PULSE_TOKEN: token },
    });
    expect(run.code, context).toBe(0);
    expect([model.errors, model.overruns], context).toEqual([[], 0]);
    expect(pulseAnswer(saw.checkIn)).toMatchObject({ needs_replan: false });
    expect(saw.held?.error).toMatch(/^Tool execution blocked: pulse: a replan is pending/);
    expect(hookMessages(run).filter((line) => line.includes('refused'))).toEqual([]);
  });

  it('lets every call and the stop through when the daemon is down, and says why on stderr', async () => {
    const scene = await pulseProjectForGemini(started);
    const { project, port } = scene;
    await scene.daemon.stop();
    let touched: Record<string, unknown> | undefined;
    const steps: Step[] = [
      () => call('run_shell_command', { command: 'touch made-while-down' }),
      (request: ModelRequest) => {
        touched = request.responseTo('run_shell_command');
        return 'Done.';
      },
    ];
    const { run, model, context } = await geminiScripted(started, scene, steps, 'Add made-while-down.');
    expect(run.code, context).toBe(0);
    expect([model.errors, model.overruns], context).toEqual([[], 0]);
    expect(touched?.error, context).toBeUndefined();
    expect(existsSync(join(project, 'made-while-down'))).toBe(true);
    // Without the daemon Gemini drops pulse's server, tools and instructions with one line, and each hook says why.
    expect(run.stderr).toContain('MCP issues detected. Run /mcp list for status.');
    expect(JSON.stringify(model.turns()[0])).not.toContain('mcp_pulse_');
    expect(JSON.stringify(model.turns()[0])).not.toContain(AGENT_RULE);
    const line = `pulse: the daemon is not running at 127.0.0.1:${port} for ${project}; not enforcing replans. Start it with: pulse start -p ${project} --port ${port}`;
    const messages = hookMessages(run);
    // One line per hook call (start, prompt, before and after the command, stop): Gemini keeps none back.
    expect(messages.length, context).toBe(5);
    expect(new Set(messages)).toEqual(new Set([line]));
  });

  it('tells the model the titles of external events once, as facts, and takes its check-in and ack', async () => {
    const titles = ['Standup moved to 10:30', 'Deploy freeze from 16:00'];
    const scene = await pulseProjectForGemini(started, async (dir) => {
      await calendarSource(dir, titles);
      await writeFile(join(dir, 'README.md'), '# A project\n');
    });
    await waitForDelivery(scene.daemon);
    const saw: Record<string, Record<string, unknown> | undefined> = {};
    const readme = () => call('read_file', { file_path: 'README.md' });
    const steps: Step[] = [
      readme,
      readme,
      () => call('mcp_pulse_pulse_should_interrupt'),
      (request) => {
        saw.checkIn = request.responseTo('mcp_pulse_pulse_should_interrupt');
        return call('mcp_pulse_pulse_ack_events', { delivery_id: pulseAnswer(saw.checkIn).delivery_id });
      },
      (request) => {
        saw.ack = request.responseTo('mcp_pulse_pulse_ack_events');
        return 'Told the user: the standup moved to 10:30, and a deploy freeze starts at 16:00.';
      },
    ];
    const { run, model, context } = await geminiScripted(started, scene, steps, 'Look around the project.', {
      args: [],
    });
    expect(run.code, context).toBe(0);
    expect([model.errors, model.overruns], context).toEqual([[], 0]);

    // The whole conversation is in the last request: the titles were told once, at the session's
    // start, framed as facts, though the prompt and two reads could have told them too.
    const conversation = told(model.turns().at(-1)!);
    for (const title of titles) expect(occurrences(conversation, `[cal] "${title}"`), title).toBe(1);
    expect(model.turns()[0]!.contents[0]!.parts[1]!.text).toMatch(
      new RegExp(
        `^<hook_context>pulse: external events need attention\\. ${EXTERNAL_FRAMING.replace(/[.()]/g, '\\$&')}`,
      ),
    );
    expect(pulseAnswer(saw.checkIn)).toMatchObject({ needs_attention: true });
    expect(pulseAnswer(saw.ack)).toMatchObject({ accepted: true });
  });

  it("refuses --autostart: Gemini connects to pulse's server before a SessionStart hook could start the daemon", async () => {
    const project = await tempGitProject(started);
    const port = await freePort();
    const refused = await runCli([
      'setup',
      'gemini',
      '--autostart',
      '--write',
      '-p',
      project,
      '--port',
      String(port),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'Gemini CLI connects to its MCP servers before its SessionStart hook runs',
    );
    expect(refused.stderr).toContain(`pulse start --detach -p ${project} --port ${port}`);

    // What --autostart would do, as a hook of the user's own: the daemon starts, after Gemini gave up on it.
    await setUpGemini(project, port);
    const settings = (await readJson(project, SETTINGS)) as { hooks: Record<string, unknown[]> };
    const start = `"${process.execPath}" "${BIN}" start --detach -p '${project}' --port ${port} >/dev/null`;
    settings.hooks.SessionStart!.unshift({
      hooks: [{ type: 'command', name: 'start-pulse', command: start, timeout: 30_000 }],
    });
    await writeJson(project, SETTINGS, settings);
    const home = await trustingHome(started, project);
    try {
      const { run, model, context } = await geminiScripted(
        started,
        { project, home },
        [() => 'Hello.'],
        'Hi.',
      );
      expect(run.code, context).toBe(0);
      expect(recordedDaemon(project, { HOME: home.home }).port).toBe(port);
      expect(run.stderr).toContain('MCP issues detected.');
      const offered = (model.turns()[0]!.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []);
      expect(offered.map((fn) => fn.name)).not.toContain('mcp_pulse_pulse_ack_replan');
    } finally {
      await runCli(['stop', '-p', project], { env: { HOME: home.home } });
    }
  });

  it("says where Gemini's folder trust stands, in pulse setup and pulse doctor, as gemini itself finds it", async () => {
    const project = await realpath(await tempGitProject(started));
    const port = await freePort();
    started.daemons.push(await startDaemon(project, { args: ['--port', String(port)] }));
    const home = await makeGeminiHome();
    started.projects.push(home.home);
    const env = { GEMINI_CLI_HOME: home.home };
    const trust = (rules: Record<string, string>) =>
      writeFile(join(home.geminiDir, 'trustedFolders.json'), JSON.stringify(rules, null, 2));
    /** What pulse doctor says of Gemini's trust, and how a headless gemini run there ends. */
    const both = async () => {
      const { stdout } = await runCli(['doctor', '-p', project, '--json'], { env });
      const findings = (JSON.parse(stdout) as DoctorReport).findings.filter(
        (f) => f.subject === 'gemini' && !f.message.startsWith('set up for port'),
      );
      const steps: Step[] = [() => call('mcp_pulse_pulse_should_interrupt'), () => 'Done.'];
      const { run, context } = await geminiScripted(started, { project, home }, steps, 'Hi.', { args: [] });
      return {
        findings,
        code: run.code,
        checkedIn: run.events.some((e) => e.type === 'tool_result' && e.status === 'success'),
        context,
      };
    };

    const setup = await runCli(['setup', 'gemini', '--write', '-p', project, '--port', String(port)], {
      env,
    });
    expect(setup.code, setup.stdout).toBe(0);
    expect(setup.stdout).toContain(
      `Gemini CLI will not use all of this yet:\n- Gemini does not trust ${project} yet`,
    );
    let now = await both();
    expect(now.code, now.context).toBe(55);
    expect(now.findings).toEqual([
      expect.objectContaining({
        ok: false,
        fix: expect.stringContaining(`Run gemini in ${project} once and choose "Trust folder"`),
      }),
    ]);

    // "Trust parent folder" in Gemini's dialog: a TRUST_PARENT rule on the project itself.
    await trust({ [project]: 'TRUST_PARENT' });
    now = await both();
    expect([now.code, now.checkedIn], now.context).toEqual([0, true]);
    expect(now.findings).toEqual([
      {
        subject: 'gemini',
        ok: true,
        message: `Gemini trusts ${project} ("${project}": TRUST_PARENT in ${join(home.geminiDir, 'trustedFolders.json')})`,
      },
    ]);

    // The longest rule wins: the parent trusted, the project itself not.
    await trust({ [dirname(project)]: 'TRUST_FOLDER', [project]: 'DO_NOT_TRUST' });
    now = await both();
    expect(now.code, now.context).toBe(55);
    expect(now.findings).toEqual([
      expect.objectContaining({
        ok: false,
        message: expect.stringContaining(`marks ${project} untrusted ("${project}": DO_NOT_TRUST)`),
      }),
    ]);
  });

  it('has doctor say that a hook Gemini cannot start would stop the agent, as the real CLI then does', async () => {
    const scene = await pulseProjectForGemini(started);
    const { project, port } = scene;
    await setUpGemini(project, port, '--hooks', 'node');
    // The node the hooks were set up with is gone (another version installed, say).
    const file = join(project, SETTINGS);
    await writeFile(file, (await readFile(file, 'utf8')).replaceAll(process.execPath, '/opt/gone/node'));
    const env = { GEMINI_CLI_HOME: scene.home.home };
    const doctor = await runCli(['doctor', '-p', project], { env });
    expect(doctor.stdout).toContain(
      'which does not exist: Gemini blocks on a hook it cannot start, so it would refuse every prompt',
    );
    expect(doctor.stdout).toContain(`fix: pulse setup gemini --write --force -p ${project}`);

    const steps: Step[] = [() => call('run_shell_command', { command: 'touch made' }), () => 'Done.'];
    const { run, model, context } = await geminiScripted(started, scene, steps, 'Add made.');
    expect(model.turns(), context).toEqual([]);
    expect(run.events.filter((event) => event.type === 'error').map((event) => event.message)).toEqual([
      'Agent execution blocked: bash: line 1: /opt/gone/node: No such file or directory',
    ]);
    expect(existsSync(join(project, 'made'))).toBe(false);

    // The fix doctor names brings the hooks back to this node.
    expect(
      (
        await runCli(
          ['setup', 'gemini', '--write', '--force', '-p', project, '--port', String(port), '--hooks', 'node'],
          { env },
        )
      ).code,
    ).toBe(0);
    const again = await runCli(['doctor', '-p', project], { env });
    expect(again.stdout).not.toContain('/opt/gone/node');
    expect(again.stdout).toContain('ok  gemini: set up for port');
  });
});
