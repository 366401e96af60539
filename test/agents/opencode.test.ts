import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PULSE_TOOLS } from '../../src/hooks/pulse-tools.js';
import { AGENT_RULE_LINES } from '../../src/mcp/agent-rule.js';
import { EXTERNAL_FRAMING } from '../../src/mcp/external-section.js';
import { waitForDelivery } from '../support/daemon.js';
import { calendarSource } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { contentText, type ModelRequest, type Step } from './chat-model.js';
import { userEdits } from './cli-process.js';
import { runScripted, serveScripted, setUpProject } from './opencode-project.js';
import { toolCall } from './smoke-scene.js';

/*
 * The real opencode (1.18.33) in a project set up by `pulse setup opencode --write`, beside a real
 * `pulse start`; only the model is scripted (Chat Completions, the user's own provider entry in
 * opencode.json). pulse's plugin (.opencode/plugins/pulse.js) is what holds calls and stops. Each
 * test reads, turn by turn, what opencode sent the model back.
 */

const started = trackStarted();

afterEach(() => started.cleanUp());

/** A call of one of pulse's tools, as opencode names them: `pulse_<tool>`. */
const pulseTool = (tool: string, args: Record<string, unknown>, id: string) =>
  toolCall(`pulse_${tool}`, args, id);

const bash = (command: string, id: string) => toolCall('bash', { command, description: command }, id);

/** The event id in one of pulse's hold or stop reasons ("… (event evt_…; the user changed …"). */
const eventIn = (reason: string | undefined) => /event (evt_\S+?)[;)]/.exec(reason ?? '')?.[1];

describe.skipIf(!process.env.PULSE_AGENT_SUITE)('pulse with the real opencode (opencode run, serve)', () => {
  it('holds a shell command while a replan is pending, runs reads, the plan edit and the ack, then the command', async () => {
    const { project } = await setUpProject(started, 'pulse-opencode-');
    const outputs: Record<string, string | undefined> = {};
    const saw = (request: ModelRequest, id: string) => {
      outputs[id] = request.outputOf(id);
      return outputs[id];
    };
    let pending = '';
    const steps: Step[] = [
      () => [pulseTool('pulse_should_interrupt', {}, 'check-in')],
      async (request) => {
        saw(request, 'check-in');
        pending = await userEdits(project, 'guidance.md', '# Guidance\n\nUse the new API everywhere.\n');
        return [bash('touch src-file', 'touch-held')];
      },
      (request) => {
        saw(request, 'touch-held');
        return [toolCall('read', { filePath: join(project, '.pulse', 'guidance.md') }, 'read')];
      },
      (request) => {
        saw(request, 'read');
        return [bash('cat .pulse/guidance.md | head -5', 'read-shell')];
      },
      (request) => {
        saw(request, 'read-shell');
        return [
          toolCall(
            'write',
            { filePath: join(project, '.pulse', 'plan.md'), content: '# Plan\n\nUse the new API.\n' },
            'plan',
          ),
        ];
      },
      (request) => {
        saw(request, 'plan');
        return [pulseTool('pulse_ack_replan', { event_id: eventIn(outputs['touch-held']) }, 'ack')];
      },
      (request) => {
        saw(request, 'ack');
        return [bash('touch src-file', 'touch-again')];
      },
      (request) => {
        saw(request, 'touch-again');
        return 'Done: the plan follows the new guidance.';
      },
    ];
    const { run, model, context } = await runScripted(
      started,
      project,
      steps,
      'Add src-file to the project.',
    );
    const details = `${context}\n${JSON.stringify(outputs, null, 2)}`;
    expect(run.timedOut, details).toBe(false);
    expect(model.errors, details).toEqual([]);
    expect(model.turns(), details).toHaveLength(steps.length);

    expect.soft(outputs['check-in'], 'pulse_should_interrupt ran').toContain('"needs_replan":false');
    expect
      .soft(outputs['touch-held'], 'held by the plugin')
      .toContain(`pulse: a replan is pending (event ${pending}`);
    expect.soft(outputs['touch-held']).toMatch(/and agent "opencode:ses_\w+"/);
    expect.soft(outputs.read, 'a read runs while pending').toContain('Use the new API everywhere.');
    expect.soft(outputs['read-shell'], 'a shell command that only reads runs').toContain('Use the new API');
    expect.soft(outputs.plan, 'the plan edit runs').toContain('Wrote file successfully');
    expect.soft(outputs.ack, 'the ack is accepted').toContain('"accepted":true');
    expect.soft(outputs['touch-again'], 'the command runs after the ack').not.toContain('pulse:');
    expect(existsSync(join(project, 'src-file')), details).toBe(true);
    expect(await readFile(join(project, '.pulse', 'plan.md'), 'utf8')).toBe('# Plan\n\nUse the new API.\n');
    expect(run.code, details).toBe(0);
  });

  it("holds a stop once per pending event under opencode serve (the TUI's server): two replans hold two stops, the third goes, and the user is told", async () => {
    const { project } = await setUpProject(started, 'pulse-opencode-stops-');
    const logged: string[] = [];
    let ack: string | undefined;
    const steps: Step[] = [
      () => [pulseTool('pulse_should_interrupt', {}, 'check-in')],
      async () => {
        logged.push(await userEdits(project, 'guidance.md', '# Guidance\n\nUse the new API.\n'));
        return 'Done.';
      },
      // Held: the plugin sent pulse's reason back as the user's next message.
      (request) => [
        pulseTool('pulse_ack_replan', { event_id: eventIn(request.texts('user').at(-1)) }, 'ack'),
      ],
      async (request) => {
        ack = request.outputOf('ack');
        logged.push(await userEdits(project, 'constraints.md', '# Constraints\n\nNo network calls.\n'));
        return 'Done again.';
      },
      // Held again, for the new event: this time the model stops without acknowledging it.
      () => 'Stopping here; the constraints can wait.',
    ];
    const server = await serveScripted(started, project, steps);
    await server.prompt('Tidy the project.');
    const still = await server.event(
      (event) =>
        event.type === 'tui.toast.show' && String(event.properties.message).includes('still pending'),
      "pulse's line that the replan is still pending",
    );
    const context = `${server.model.turns().length} model turns\n${server.output().slice(-3000)}`;
    expect(server.model.errors, context).toEqual([]);
    const users = server.model
      .turns()
      .at(-1)!
      .messages.filter((message) => message.role === 'user');
    const reasons = users
      .map((message) => contentText(message.content))
      .filter((text) => text.startsWith('pulse:'));
    expect(reasons.map(eventIn), context).toEqual(logged);
    expect(reasons[0]).toContain('Do not stop yet');
    expect(reasons[0]).toContain('the user changed .pulse/guidance.md');
    expect(reasons[1]).toContain('the user changed .pulse/constraints.md');
    expect(ack, 'the ack of the first event').toContain('"accepted":true');
    expect(still.properties).toMatchObject({
      title: 'pulse',
      variant: 'warning',
      message: `pulse: replan ${logged[1]} is still pending: the agent stopped without acknowledging it.`,
    });
    expect(server.model.turns(), context).toHaveLength(steps.length);
    expect(server.model.overruns, 'no turn past the third stop').toBe(0);
  });

  it("sends PULSE_TOKEN to a daemon that requires one, from opencode.json's entry and pulse's plugin alike", async () => {
    const token = 'f00dfeedf00dfeedf00dfeedf00dfeed';
    const { project } = await setUpProject(started, 'pulse-opencode-', { daemonEnv: { PULSE_TOKEN: token } });
    const outputs: Record<string, string | undefined> = {};
    const steps: Step[] = [
      () => [pulseTool('pulse_should_interrupt', {}, 'check-in')],
      async (request) => {
        outputs['check-in'] = request.outputOf('check-in');
        await userEdits(project, 'guidance.md', '# Guidance\n\nUse the new API.\n');
        return [bash('touch src-file', 'touch-held')];
      },
      (request) => {
        outputs['touch-held'] = request.outputOf('touch-held');
        return 'Held.';
      },
    ];
    const { run, model, context } = await runScripted(started, project, steps, 'Carry on.', {
      PULSE_TOKEN: token,
    });
    const details = `${context}\n${JSON.stringify(outputs, null, 2)}`;
    expect(model.errors, details).toEqual([]);
    // The check-in ran: opencode connected with the token (without it, no pulse tool at all).
    expect(outputs['check-in'], details).toContain('"needs_replan":false');
    expect(outputs['touch-held'], details).toContain('pulse: a replan is pending');
    expect(run.stderr, details).not.toContain('refused the hook');
    expect(existsSync(join(project, 'src-file'))).toBe(false);
    expect(run.code, details).toBe(0);
  });

  it("offers pulse's three tools as pulse_pulse_*, tells the model pulse's rule from AGENTS.md, and allows those tools and nothing else", async () => {
    // A user who wants every tool asked about: opencode run rejects whatever asks.
    const { project } = await setUpProject(started, 'pulse-opencode-offer-', {
      extra: { permission: 'ask' },
    });
    let offered: string[] = [];
    let system = '';
    const steps: Step[] = [
      (request) => {
        offered = request.toolNames();
        system = request.texts('system').join('\n');
        return [pulseTool('pulse_should_interrupt', {}, 'check-in')];
      },
      () => [bash('touch made', 'touch')],
      () => 'Never asked: the run ends at the rejection.',
    ];
    const { run, model, context } = await runScripted(started, project, steps, 'Tidy the project.');
    expect(run.code, context).toBe(0);
    expect(offered.filter((name) => name.startsWith('pulse_')).sort()).toEqual(
      PULSE_TOOLS.map((tool) => `pulse_${tool}`).sort(),
    );
    expect(system).toContain(`Instructions from: ${join(project, 'AGENTS.md')}`);
    for (const line of AGENT_RULE_LINES) expect(system).toContain(line);
    expect(system).toContain("opencode's plugin .opencode/plugins/pulse.js");

    const states = run.events.flatMap((event) => (event.part?.state ? [event.part.state] : []));
    expect(
      states.map((state) => state.status),
      context,
    ).toEqual(['completed', 'error']);
    expect(String(states[0]!.output)).toContain('"needs_replan":false');
    expect(states[1]!.error).toBe('The user rejected permission to use this specific tool call.');
    expect(run.stderr).toContain('permission requested: bash (touch made); auto-rejecting');
    expect(existsSync(join(project, 'made'))).toBe(false);
    expect(model.turns()).toHaveLength(2);
    const config = JSON.parse(await readFile(join(project, 'opencode.json'), 'utf8'));
    expect(config.permission).toEqual({
      '*': 'ask',
      ...Object.fromEntries(PULSE_TOOLS.map((tool) => [`pulse_${tool}`, 'allow'])),
    });
  });

  it('lets every call and the stop through when the daemon is down, and says so in one line', async () => {
    const { project, daemon } = await setUpProject(started, 'pulse-opencode-down-');
    await daemon.stop();
    let touched: string | undefined;
    const steps: Step[] = [
      () => [bash('touch made-while-down', 'touch')],
      (request) => {
        touched = request.outputOf('touch');
        return 'Done.';
      },
    ];
    const { run, model, home, context } = await runScripted(started, project, steps, 'Add made-while-down.');
    expect(run.code, context).toBe(0);
    expect(model.turns(), context).toHaveLength(2);
    expect(touched, 'the command ran, not held').not.toContain('pulse:');
    expect(existsSync(join(project, 'made-while-down'))).toBe(true);
    // Four hooks failed to reach the daemon (the prompt, before and after the call, the stop): one line.
    const line = `pulse: the daemon is not running at 127.0.0.1:${daemon.port} for ${project}; not enforcing replans. Start it with: pulse start -p ${project} --port ${daemon.port}`;
    expect(
      run.stderr.split('\n').filter((text) => text.startsWith('pulse:')),
      context,
    ).toEqual([line]);
    const log = await readFile(join(home.home, '.local', 'share', 'opencode', 'log', 'opencode.log'), 'utf8');
    expect(log).toContain(`level=WARN`);
    expect(log.split('\n').filter((text) => text.includes(line))).toHaveLength(1);
  });

  it('tells the model the titles of external events once, as facts, and takes its check-in and ack', async () => {
    const titles = ['Standup moved to 10:30', 'Deploy freeze from 16:00'];
    const { project, daemon } = await setUpProject(started, 'pulse-opencode-news-', {
      prepare: (dir) => calendarSource(dir, titles),
    });
    await waitForDelivery(daemon);
    const outputs: Record<string, string | undefined> = {};
    let last: ModelRequest | undefined;
    const steps: Step[] = [
      () => [toolCall('read', { filePath: join(project, 'opencode.json') }, 'read-1')],
      () => [bash('ls', 'read-2')],
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
    const { run, model, context } = await runScripted(started, project, steps, 'Look around the project.');
    expect(run.code, context).toBe(0);
    expect(model.errors, context).toEqual([]);

    // The whole conversation is in the last request: each title was told once, in the user's
    // message, framed as facts, though the prompt and both reads could have told it.
    const conversation = last!.body.messages.map((message) => ({
      role: message.role,
      text: contentText(message.content),
    }));
    const all = conversation.map(({ text }) => text).join('\n');
    for (const title of titles) expect(all.split(`[cal] "${title}"`).length - 1, title).toBe(1);
    const told = conversation.filter(({ text }) => text.includes(`[cal] "${titles[0]}"`));
    expect(told, context).toEqual([{ role: 'user', text: expect.stringContaining(EXTERNAL_FRAMING) }]);
    expect(told[0]!.text).toContain('Look around the project.');
    expect(outputs['check-in']).toContain('"needs_attention":true');
    expect(outputs.ack).toContain('"accepted":true');
    expect(model.overruns).toBe(0);
  });
});
