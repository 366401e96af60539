import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/commands/doctor.js';
import { PULSE_TOOLS } from '../../src/hooks/pulse-tools.js';
import { AGENT_RULE_LINES } from '../../src/mcp/agent-rule.js';
import { EXTERNAL_FRAMING } from '../../src/mcp/external-section.js';
import { oneShot, runCli, waitForDelivery } from '../support/daemon.js';
import { calendarSource } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { type ScriptedModel as AnthropicModel, startAnthropicModel, toolCalls } from './anthropic-model.js';
import { type ChatBody, contentText, type ModelRequest, type Step } from './chat-model.js';
import { runClaude } from './claude.js';
import { userEdits } from './cli-process.js';
import { runHookCommand } from './codex-project.js';
import { makeCopilotHome } from './copilot.js';
import { copilotScripted, pulseHookLine, pulseProjectForCopilot } from './copilot-project.js';
import { pulseProjectFor, setUpAgent } from './pulse-project.js';
import { toolCall as call } from './smoke-scene.js';

/*
 * The replan interrupt with the real GitHub Copilot CLI (1.0.102, `copilot -p`): a real daemon,
 * `pulse setup copilot --write` as the README says, the folder trusted as the user trusts it, and
 * only the model scripted. No flag approves pulse's tools: pulse's permissionRequest hook does. The
 * user's own permissions (`--allow-tool=write`, `shell(touch)`) are given where the script edits or
 * touches a file, as a user of `-p` gives them. What runs, what is held and what the model reads
 * back are all taken from the requests Copilot sends.
 */

const started = trackStarted();
const closers: AnthropicModel[] = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((model) => model.close()));
  await started.cleanUp();
});

/** The user's own permissions for the file edits and the commands the scripts run. */
const USER_PERMISSIONS = ['--allow-tool=write', '--allow-tool=shell(touch)', '--allow-tool=shell(cat)'];

/** What Copilot tells the model of a call nobody approved in `-p`. */
const NOT_APPROVED =
  'Permission denied because no interactive user response was available. Retry in an interactive session so the user can approve it, or try an alternative that does not require this permission.';

/** A promise and the function that settles it, to pace one scripted model on the other's steps. */
const signal = () => {
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return { done, resolve };
};

/** The event id in one of pulse's hold or stop reasons ("… (event evt_…; the user changed …"). */
const eventIn = (reason: string | undefined) => /event (evt_\S+?)[;)]/.exec(reason ?? '')?.[1];

/** How many times `needle` occurs in the text. */
const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

/** The conversation of a request, in order, as the model read it (the system prompt left out). */
const conversation = (body: ChatBody) =>
  body.messages
    .filter((message) => message.role !== 'system')
    .map((message) => ({ role: message.role, text: contentText(message.content) }));

/** The user messages of a request without Copilot's `<current_datetime>` stamp: the prompts, and held stops' reasons. */
const prompts = (body: ChatBody) =>
  conversation(body)
    .filter(({ role }) => role === 'user')
    .map(({ text }) => text.replace(/^<current_datetime>[^<]*<\/current_datetime>\n\n/, ''));

/** The model's `edit` of `.pulse/plan.md`, replacing its last line. */
const planEdit = async (project: string, id: string) => {
  const last = (await readFile(join(project, '.pulse', 'plan.md'), 'utf8')).trimEnd().split('\n').pop()!;
  return call(
    'edit',
    { path: join(project, '.pulse', 'plan.md'), old_str: last, new_str: `${last}\n\n- Use the new API.` },
    id,
  );
};

const touch = (file: string, id: string) =>
  call('bash', { command: `touch ${file}`, description: 'Touch' }, id);

describe.skipIf(!process.env.PULSE_AGENT_SUITE)(
  'GitHub Copilot CLI 1.0.102, set up by `pulse setup copilot --write`',
  () => {
    it("offers pulse's tools and the rule, runs them unasked with no --allow-tool, and leaves every other approval to Copilot", async () => {
      const { project } = await pulseProjectForCopilot(started);
      const outputs: Record<string, string | undefined> = {};
      let first: ModelRequest | undefined;
      const steps: Step[] = [
        (request) => {
          first = request;
          return [call('pulse-pulse_should_interrupt', {}, 'check-in')];
        },
        () => [touch('unapproved', 'touch')],
        (request) => {
          outputs['check-in'] = request.outputOf('check-in');
          outputs.touch = request.outputOf('touch');
          return 'Done.';
        },
      ];
      const { run, model, context } = await copilotScripted(started, project, steps, {
        prompt: 'Look around the project.',
      });
      expect(run.code, context).toBe(0);

      // The prompt says nothing of pulse: the rule comes from .github/copilot-instructions.md.
      expect(
        first!
          .toolNames()
          .filter((name) => name.startsWith('pulse-'))
          .sort(),
      ).toEqual(PULSE_TOOLS.map((tool) => `pulse-${tool}`).sort());
      expect(first!.texts('system').join('\n')).toContain(AGENT_RULE_LINES.join('\n'));
      // Copilot CLI 1.0.102 speaks MCP 2026-07-28 to pulse: no session, so pulse knows it by a handle.
      expect(JSON.parse(outputs['check-in'] ?? '{}')).toMatchObject({
        needs_replan: false,
        agent_id: expect.stringMatching(/^handle:/),
      });
      // pulse approves nothing else: Copilot refuses the shell command nobody allowed.
      expect(outputs.touch, context).toBe(NOT_APPROVED);
      expect(existsSync(join(project, 'unapproved'))).toBe(false);
      expect(model.overruns).toBe(0);
    });

    it('holds a shell command while a replan is pending, runs the read, the plan edit and the ack, then the command', async () => {
      const { project } = await pulseProjectForCopilot(started);
      const outputs: Record<string, string | undefined> = {};
      let pending = '';
      const saw = (request: ModelRequest, id: string) => {
        outputs[id] = request.outputOf(id);
        return outputs[id];
      };
      const steps: Step[] = [
        () => [call('pulse-pulse_should_interrupt', {}, 'check-in')],
        async (request) => {
          saw(request, 'check-in');
          // The user changes their mind; the very next call must be held (no waiting for the log).
          pending = await userEdits(project, 'guidance.md', '# Guidance\n\nUse the new API everywhere.\n');
          return [touch('src-file', 'touch-held')];
        },
        (request) => {
          saw(request, 'touch-held');
          return [call('view', { path: join(project, '.pulse', 'guidance.md') }, 'read')];
        },
        (request) => {
          saw(request, 'read');
          return [call('bash', { command: 'cat .pulse/guidance.md', description: 'Read' }, 'read-shell')];
        },
        async (request) => {
          saw(request, 'read-shell');
          return [await planEdit(project, 'plan-edit')];
        },
        (request) => {
          saw(request, 'plan-edit');
          const held = outputs['touch-held'] ?? '';
          const agent = /and agent "([^"]+)"/.exec(held)?.[1];
          return [call('pulse-pulse_ack_replan', { event_id: eventIn(held), agent }, 'ack')];
        },
        (request) => {
          saw(request, 'ack');
          return [touch('src-file', 'touch-again')];
        },
        (request) => {
          saw(request, 'touch-again');
          return 'Done: the plan follows the new guidance.';
        },
      ];
      const { run, model, context } = await copilotScripted(started, project, steps, {
        args: USER_PERMISSIONS,
      });
      const details = `${context}\n${JSON.stringify(outputs, null, 2)}`;
      expect(model.errors, details).toEqual([]);
      expect(JSON.parse(outputs['check-in'] ?? '{}').needs_replan, details).toBe(false);
      expect(outputs['touch-held'], details).toMatch(
        new RegExp(`^Denied by preToolUse hook: pulse: a replan is pending \\(event ${pending};`),
      );
      expect(outputs['touch-held']).toContain(
        `call pulse_ack_replan with event_id "${pending}" and agent "copilot:`,
      );
      expect(outputs.read, details).toContain('Use the new API everywhere.');
      expect(outputs['read-shell'], details).toContain('Use the new API everywhere.');
      expect(outputs['plan-edit'], details).not.toContain('Denied');
      expect(await readFile(join(project, '.pulse', 'plan.md'), 'utf8')).toContain('- Use the new API.');
      expect(JSON.parse(outputs.ack ?? '{}'), details).toMatchObject({
        accepted: true,
        acknowledged_event_id: pending,
      });
      expect(outputs['touch-again'], details).toContain('exit code 0');
      expect(existsSync(join(project, 'src-file'))).toBe(true);
      expect(model.overruns, 'the stop after the ack went').toBe(0);
      expect(run.code, details).toBe(0);
    });

    it("sends $PULSE_TOKEN to a daemon that requires one, from .mcp.json and its hooks alike, and holds the agent's own edit of guidance.md", async () => {
      const token = 'f00dfeedf00dfeedf00dfeedf00dfeed';
      const { project } = await pulseProjectFor(started, 'copilot', { daemonEnv: { PULSE_TOKEN: token } });
      const outputs: Record<string, string | undefined> = {};
      const guidance = join(project, '.pulse', 'guidance.md');
      const steps: Step[] = [
        () => [call('pulse-pulse_should_interrupt', {}, 'check-in')],
        async (request) => {
          outputs['check-in'] = request.outputOf('check-in');
          await userEdits(project, 'guidance.md', '# Guidance\n\nUse the new API.\n');
          return [
            call('edit', { path: guidance, old_str: 'Use the new API.', new_str: 'Never mind.' }, 'edit'),
          ];
        },
        (request) => {
          outputs.edit = request.outputOf('edit');
          return 'Held.';
        },
      ];
      const { run, model, context } = await copilotScripted(started, project, steps, {
        args: USER_PERMISSIONS,
        env: { PULSE_TOKEN: token },
      });
      const details = `${context}\n${JSON.stringify(outputs, null, 2)}`;
      expect(run.code, details).toBe(0);
      expect(model.errors, details).toEqual([]);
      // The check-in ran: Copilot connected to pulse with the token (without it, no pulse tool at all).
      expect(JSON.parse(outputs['check-in'] ?? '{}'), details).toMatchObject({ needs_replan: false });
      expect(outputs.edit, details).toMatch(/^Denied by preToolUse hook: pulse: a replan is pending/);
      expect(await readFile(guidance, 'utf8')).toBe('# Guidance\n\nUse the new API.\n');
    });

    it('holds a stop once per pending event: two replans in one prompt hold two stops, the third stop goes', async () => {
      const { project, daemon } = await pulseProjectForCopilot(started);
      const logged: string[] = [];
      let ack: string | undefined;
      const steps: Step[] = [
        () => [call('pulse-pulse_should_interrupt', {}, 'check-in')],
        async () => {
          logged.push(await userEdits(project, 'guidance.md', '# Guidance\n\nUse the new API.\n'));
          return 'Done.';
        },
        // Held: the reason is the next prompt; the model acknowledges the event it names.
        (request) => [
          call('pulse-pulse_ack_replan', { event_id: eventIn(prompts(request.body).at(-1)) }, 'ack'),
        ],
        async (request) => {
          ack = request.outputOf('ack');
          logged.push(await userEdits(project, 'constraints.md', '# Constraints\n\nNo network calls.\n'));
          return 'Done again.';
        },
        // Held again, for the new event: this time the model stops without acknowledging it.
        () => 'Stopping here; the constraints can wait.',
      ];
      const { run, model, context } = await copilotScripted(started, project, steps);
      expect(model.errors, context).toEqual([]);
      const held = prompts(model.turns().at(-1)!).filter((text) =>
        text.startsWith('pulse: a replan is pending'),
      );
      expect(held.map(eventIn), context).toEqual(logged);
      expect(held[0]).toContain('the user changed .pulse/guidance.md');
      expect(held[1]).toContain('the user changed .pulse/constraints.md');
      expect(JSON.parse(ack ?? '{}')).toMatchObject({ accepted: true });
      expect(model.overruns, 'no model request past the third stop').toBe(0);
      expect(run.code, context).toBe(0);
      const check = await oneShot(daemon.url, 'tools/call', {
        name: 'pulse_should_interrupt',
        arguments: {},
      });
      expect(check.body.result?.structuredContent?.pending_replan_event_id, 'still pending').toBe(logged[1]);
    });

    it('lets every call and stop through when the daemon is down, and says so in one progress line', async () => {
      const { project, daemon } = await pulseProjectForCopilot(started);
      await daemon.stop();
      let touched: string | undefined;
      const steps: Step[] = [
        () => [touch('made-while-down', 'touch')],
        (request) => {
          touched = request.outputOf('touch');
          return 'Done.';
        },
      ];
      const { run, model, context } = await copilotScripted(started, project, steps, {
        args: USER_PERMISSIONS,
      });
      expect(run.code, context).toBe(0);
      expect(touched, context).toContain('exit code 0');
      expect(existsSync(join(project, 'made-while-down'))).toBe(true);
      expect(model.overruns, 'the stop went').toBe(0);

      // `-p` prints no hook output: run pulse's hooks by hand, as Copilot does. Its timeline shows a
      // progress line (seen interactively), which Copilot takes for no answer.
      const line = `pulse: the daemon is not running at 127.0.0.1:${daemon.port} for ${project}; not enforcing replans. Start it with: pulse start -p ${project} --port ${daemon.port}`;
      const input = JSON.stringify({
        sessionId: 's',
        timestamp: 1,
        cwd: project,
        toolName: 'bash',
        toolArgs: {},
      });
      for (const event of ['preToolUse', 'agentStop']) {
        expect(runHookCommand(await pulseHookLine(project, event), input), event).toEqual({
          code: 0,
          stdout: `${JSON.stringify({ type: 'progress', message: line })}\n`,
          stderr: `${line}\n`,
        });
      }
    });

    it('tells the model the titles of external events once, as facts, and takes its check-in and ack', async () => {
      const titles = ['Standup moved to 10:30', 'Deploy freeze from 16:00'];
      const { project, daemon } = await pulseProjectForCopilot(started, async (dir) => {
        await calendarSource(dir, titles);
      });
      await waitForDelivery(daemon);
      const outputs: Record<string, string | undefined> = {};
      let last: ModelRequest | undefined;
      const steps: Step[] = [
        () => [call('view', { path: join(project, 'README.md') }, 'read-1')],
        () => [call('glob', { pattern: '*.md' }, 'read-2')],
        () => [call('pulse-pulse_should_interrupt', {}, 'check-in')],
        (request) => {
          outputs['check-in'] = request.outputOf('check-in');
          const delivery_id = /"delivery_id":"([^"]+)"/.exec(outputs['check-in'] ?? '')?.[1];
          return [call('pulse-pulse_ack_events', { delivery_id }, 'ack')];
        },
        (request) => {
          outputs.ack = request.outputOf('ack');
          last = request;
          return 'Told the user: the standup moved to 10:30, and a deploy freeze starts at 16:00.';
        },
      ];
      const { run, model, context } = await copilotScripted(started, project, steps, {
        prompt: 'Look around the project.',
      });
      expect(run.code, context).toBe(0);
      expect(model.errors, context).toEqual([]);
      // The whole conversation is in the last request: each title was told once, though five hooks
      // (start, prompt, two reads, the check-in) could tell, framed as facts.
      const all = conversation(last!.body)
        .map(({ text }) => text)
        .join('\n');
      for (const title of titles) expect(occurrences(all, `[cal] "${title}"`), title).toBe(1);
      expect(all).toContain(EXTERNAL_FRAMING);
      expect(outputs['check-in']).toContain('"needs_attention":true');
      expect(outputs.ack).toContain('"accepted":true');
      expect(model.overruns).toBe(0);
    });

    it('in a project set up for Claude Code too, holds each Copilot call once, and each agent until it acknowledges itself', async () => {
      const { project, port } = await pulseProjectForCopilot(started);
      await setUpAgent('claude', project, port);
      const claudeCheckedIn = signal();
      const copilotAcked = signal();
      let pending = '';
      const agentIn = (held: string | undefined) => /and agent "([^"]+)"/.exec(held ?? '')?.[1];

      // Copilot skips Claude Code's HTTP hooks (plain http, with allowedEnvVars): only pulse's own answer.
      const outputs: Record<string, string | undefined> = {};
      const steps: Step[] = [
        () => [call('pulse-pulse_should_interrupt', {}, 'check-in')],
        async () => {
          await claudeCheckedIn.done;
          pending = await userEdits(project, 'guidance.md', '# Guidance\n\nBoth agents: use the new API.\n');
          return [touch('copilot-file', 'held')];
        },
        async (request) => {
          outputs.held = request.outputOf('held');
          return [await planEdit(project, 'plan')];
        },
        () => [call('pulse-pulse_ack_replan', { event_id: pending, agent: agentIn(outputs.held) }, 'ack')],
        (request) => {
          outputs.ack = request.outputOf('ack');
          copilotAcked.resolve();
          return [touch('copilot-file', 'again')];
        },
        (request) => {
          outputs.again = request.outputOf('again');
          return 'Done.';
        },
      ];

      // Claude Code, working in the same project at the same time.
      const use = (name: string, input: unknown) => [{ type: 'tool_use' as const, name, input }];
      const claudeTouch = use('Bash', { command: 'touch claude-file', description: 'Create claude-file' });
      const claude = await startAnthropicModel({
        script: [
          () => use('mcp__pulse__pulse_should_interrupt', {}),
          async () => {
            claudeCheckedIn.resolve();
            await copilotAcked.done;
            return claudeTouch;
          },
          () =>
            use('Write', {
              file_path: join(project, '.pulse', 'plan.md'),
              content: '# Plan\n\nClaude follows.\n',
            }),
          (request) => {
            const held = toolCalls(request).findLast((c) => c.name === 'Bash')?.result ?? '';
            return use('mcp__pulse__pulse_ack_replan', { event_id: pending, agent: agentIn(held) });
          },
          () => claudeTouch,
          () => [{ type: 'text' as const, text: 'Done.' }],
        ],
      });
      closers.push(claude);
      const [copilot, claudeRun] = await Promise.all([
        copilotScripted(started, project, steps, { args: USER_PERMISSIONS }),
        runClaude({
          project,
          modelUrl: claude.url,
          prompt: 'Carry on.',
          userSettings: { permissions: { allow: ['Bash(touch claude-file)'] } },
        }),
      ]);

      const all = conversation(copilot.model.turns().at(-1)!)
        .map(({ text }) => text)
        .join('\n');
      expect(outputs.held, copilot.context).toMatch(/^Denied by preToolUse hook: pulse: a replan is pending/);
      // One answer to the call and nothing else said of it: no second hook (Claude Code's) answered.
      expect(occurrences(all, `pulse: a replan is pending (event ${pending}`), copilot.context).toBe(1);
      expect(JSON.parse(outputs.ack ?? '{}')).toMatchObject({ accepted: true });
      expect(outputs.again).toContain('exit code 0');

      // Copilot's ack did not free Claude Code: its call was held until it acknowledged itself.
      const [, heldByPulse, , ackClaude, work] = toolCalls(claude.turns().at(-1)!);
      expect(heldByPulse).toMatchObject({ name: 'Bash', isError: true });
      expect(heldByPulse!.result).toContain(`pulse: a replan is pending (event ${pending}`);
      expect(JSON.parse(ackClaude!.result!)).toMatchObject({
        accepted: true,
        acknowledged_event_id: pending,
      });
      expect(JSON.parse(ackClaude!.result!).agent_id).not.toBe(JSON.parse(outputs.ack ?? '{}').agent_id);
      expect(work).toMatchObject({ name: 'Bash', isError: false });
      expect(existsSync(join(project, 'claude-file')) && existsSync(join(project, 'copilot-file'))).toBe(
        true,
      );
      expect([copilot.run.code, claudeRun.code]).toEqual([0, 0]);
    });

    it('pulse setup and pulse doctor say whether Copilot trusts the folder, as Copilot itself behaves at each step', async () => {
      const { project } = await pulseProjectForCopilot(started);
      const home = await makeCopilotHome([]);
      const env = { COPILOT_HOME: dirname(home.configFile) };
      const doctor = async () => {
        const { stdout } = await runCli(['doctor', '-p', project, '--json'], { env });
        return (JSON.parse(stdout) as DoctorReport).findings.filter(
          (f) => f.subject === 'copilot' && !f.message.startsWith('set up for port'),
        );
      };
      const offered = async () => {
        const { model } = await copilotScripted(started, project, [() => 'Nothing to do.'], { home });
        return model.turns()[0]!.tools?.some((tool) => tool.function.name === 'pulse-pulse_should_interrupt');
      };

      const setup = await runCli(['setup', 'copilot', '-p', project], { env });
      expect(setup.stdout).toContain(`Copilot does not trust ${project}`);
      expect(await doctor()).toEqual([
        expect.objectContaining({ ok: false, message: expect.stringContaining('does not trust') }),
      ]);
      expect(await offered(), 'untrusted: no pulse server').toBe(false);

      // What Copilot writes when the user answers "Yes, and remember this folder for future sessions".
      await writeFile(
        home.configFile,
        `// User settings belong in settings.json.\n// This file is managed automatically.\n{\n  "trustedFolders": [\n    "${project}"\n  ]\n}\n`,
      );
      expect(await doctor()).toEqual([
        expect.objectContaining({ ok: true, message: expect.stringContaining(`Copilot trusts ${project}`) }),
      ]);
      expect(await offered(), 'trusted: the pulse server').toBe(true);
      expect((await runCli(['setup', 'copilot', '-p', project], { env })).stdout).not.toContain(
        'will not use all',
      );
    });
  },
);
