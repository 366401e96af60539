import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectId } from '../../src/store/project-id.js';
import { pulseRunning } from '../support/cli-running.js';
import { callTool, connectClient, runCli } from '../support/daemon.js';
import { trackStarted } from '../support/started.js';
import { startAnthropicModel, type Turn, toolCalls } from './anthropic-model.js';
import { inAgentSuite, runClaude } from './claude.js';
import { eventIn } from './claude-beside.js';
import { codexConfig, makeCodexHome, runCodexExec } from './codex.js';
import { reviewHooks, trustProject } from './codex-trust.js';
import { type FunctionCall, type ModelRequest, startScriptedModel } from './openai-model.js';
import { pulseProjectForClaude, setUpAgent } from './pulse-project.js';
import { pulseAnswer as answer, revisionIn } from './revision.js';

/*
 * Both eras of MCP in one project on one daemon: the real Claude Code 2.1.332 and the real Codex
 * 0.171.0 on 2026-07-28 (no protocol session: pulse knows each by the clientInfo in its requests'
 * _meta and the agent_handle it minted; their models never pass it back, because each host's
 * PreToolUse hook announces the call), and a v1 SDK client on 2025-11-25 (a session). The user
 * changes the guidance; all three owe it; each is freed only by its own ack, one after another.
 * Codex speaks 2026-07-28 only with its mcp_2026_07_28 feature on (era-negotiation.test.ts), which
 * the user turns on in their own config.toml.
 */

const started = trackStarted();
afterEach(() => started.cleanUp());

/** A promise and the function that settles it, to pace the agents on each other. */
const signal = () => {
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return { done, resolve };
};

const claude = (name: string, input: unknown): Turn => [{ type: 'tool_use', name, input }];
const codexPulse = (name: string, args: Record<string, unknown>, call_id: string): FunctionCall => ({
  type: 'function_call',
  namespace: 'mcp__pulse',
  name,
  arguments: args,
  call_id,
});
const codexShell = (cmd: string, call_id: string): FunctionCall => ({
  type: 'function_call',
  name: 'exec_command',
  arguments: { cmd },
  call_id,
});

const CLAUDE_LABEL = /Claude Code 2\.1\.332 \(/;
const CODEX_LABEL = /Codex 0\.171\.0 \(/;
const V1_LABEL = /v1-client 1\.32\.2 \(session [0-9a-f]{8}…/;

describe.skipIf(!inAgentSuite)(
  'Claude Code and Codex on 2026-07-28 and a v1 SDK client on 2025-11-25 in one project',
  () => {
    it('holds all three after a guidance edit; each is freed only by its own ack, and status names each with its revision', async () => {
      const scene = await pulseProjectForClaude(started);
      const { project, port, daemon } = scene;
      await setUpAgent('codex', project, port);
      const mcpUrl = `http://127.0.0.1:${port}/p/${projectId(project)}/mcp`;

      const claudeIn = signal();
      const codexIn = signal();
      const edited = signal();
      const claudeHeld = signal();
      const codexHeld = signal();
      const v1Acked = signal();
      const claudeFreed = signal();
      let pending = '';

      const touchA = claude('Bash', { command: 'touch a-file', description: 'Create a-file' });
      const claudeModel = await startAnthropicModel({
        script: [
          () => claude('mcp__pulse__pulse_should_interrupt', {}),
          async () => {
            claudeIn.resolve();
            await edited.done;
            return touchA;
          },
          // Held: it tries again once the v1 client has acknowledged, and is held again.
          async () => {
            claudeHeld.resolve();
            await v1Acked.done;
            return touchA;
          },
          () => claude('Read', { file_path: join(project, '.pulse', 'guidance.md') }),
          (request) => {
            const [, held] = toolCalls(request);
            // No handle: Claude Code's PreToolUse hook announced this very call (its tool_use_id rides in _meta).
            return claude('mcp__pulse__pulse_ack_replan', { event_id: eventIn(held?.result) });
          },
          () => touchA,
          () => {
            claudeFreed.resolve();
            return [{ type: 'text', text: 'Done.' }];
          },
        ],
      });
      started.streams.push({ close: () => void claudeModel.close() });

      const codexSaw: Record<string, string | undefined> = {};
      const saw = (request: ModelRequest, callId: string) => {
        codexSaw[callId] = request.outputOf(callId);
      };
      const codexModel = await startScriptedModel([
        () => [codexPulse('pulse_should_interrupt', {}, 'check-in')],
        async (request) => {
          saw(request, 'check-in');
          codexIn.resolve();
          await edited.done;
          return [codexShell('touch c-file', 'held')];
        },
        // Held: it tries again once Claude Code has acknowledged and run, and is held again.
        async (request) => {
          saw(request, 'held');
          codexHeld.resolve();
          await claudeFreed.done;
          return [codexShell('touch c-file', 'still-held')];
        },
        (request) => {
          saw(request, 'still-held');
          return [
            // No handle: Codex's PreToolUse hook announced the call, the only one of its kind in flight.
            codexPulse('pulse_ack_replan', { event_id: pending }, 'ack'),
          ];
        },
        (request) => {
          saw(request, 'ack');
          return [codexShell('touch c-file', 'work')];
        },
        (request) => {
          saw(request, 'work');
          return 'Done.';
        },
      ]);
      started.streams.push({ close: () => void codexModel.close() });
      const codexHome = await makeCodexHome(
        codexConfig(codexModel.baseUrl, '[features]\nmcp_2026_07_28 = true\n'),
      );
      started.projects.push(codexHome.home);
      await trustProject(codexHome, project);
      await reviewHooks(codexHome, project);

      const runs = Promise.all([
        runClaude({
          project,
          modelUrl: claudeModel.url,
          prompt: 'Carry on, Claude.',
          userSettings: { permissions: { allow: ['Bash(touch a-file)'] } },
        }),
        runCodexExec({
          cwd: project,
          home: codexHome,
          prompt: 'Carry on, Codex.',
          args: ['--sandbox', 'workspace-write'],
        }),
      ]);

      await Promise.all([claudeIn.done, codexIn.done]);
      // The v1 SDK client checks in on its session once both agents have: a client named nothing
      // pulse knows, arriving while a hooked agent has not yet called pulse, is tied to it by elimination.
      const v1 = await connectClient(mcpUrl, { name: 'v1-client', version: '1.32.2' });
      started.clients.push(v1);
      expect(await callTool(v1, 'pulse_should_interrupt')).toMatchObject({ needs_replan: false });
      // The user steers all three from another terminal, and waits for their acks.
      const guide = pulseRunning(started, [
        'guide',
        'Every agent: use the new API.',
        '-p',
        project,
        '--wait',
      ]);
      await guide.printed(/must now replan/, 30_000);
      pending = /logged as (evt_\S+)\./.exec(guide.output())![1]!;
      edited.resolve();
      await Promise.all([claudeHeld.done, codexHeld.done]);

      // All three owe the change; status names each as its user knows it, with the revision it speaks.
      const owing = await runCli(['status', '-p', project, '--port', String(port)]);
      const status = owing.stdout;
      expect(status.match(/^owes ack: .* owes evt_\S+$/gm), status).toHaveLength(3);
      for (const label of [CLAUDE_LABEL, CODEX_LABEL, V1_LABEL]) {
        expect(status, String(label)).toMatch(
          new RegExp(`^owes ack: +${label.source}.* owes ${pending}$`, 'm'),
        );
      }
      expect(revisionIn(status, CLAUDE_LABEL), status).toBe('2026-07-28');
      expect(revisionIn(status, CODEX_LABEL), status).toBe('2026-07-28');
      expect(revisionIn(status, V1_LABEL), status).toBe('2025-11-25');

      // The v1 client acknowledges for itself: Claude Code and Codex are held again after it.
      expect(await callTool(v1, 'pulse_should_interrupt')).toMatchObject({
        needs_replan: true,
        pending_replan_event_id: pending,
      });
      const v1Ack = await callTool(v1, 'pulse_ack_replan', { event_id: pending });
      expect(v1Ack).toMatchObject({ accepted: true, acknowledged_event_id: pending });
      v1Acked.resolve();

      const [claudeRun, codexRun] = await runs;
      expect(claudeModel.problems).toEqual([]);
      expect(codexModel.errors, codexRun.stderr).toEqual([]);
      expect([claudeRun.code, codexRun.code], codexRun.stderr).toEqual([0, 0]);

      // Claude Code: held before the v1 ack and after it; its own ack freed it (and not the others).
      const [check, held, stillHeld, , ack, work] = toolCalls(claudeModel.turns().at(-1)!);
      expect(answer(check?.result)).toMatchObject({ needs_replan: false });
      expect(
        answer(check?.result)?.agent_handle,
        'a 2026 client has no session: pulse minted a handle',
      ).toEqual(expect.any(String));
      for (const call of [held, stillHeld]) {
        expect(call).toMatchObject({ name: 'Bash', isError: true });
        expect(call!.result).toContain(`call pulse_ack_replan with event_id "${pending}"`);
      }
      const claudeAck = answer(ack?.result);
      expect(claudeAck).toMatchObject({ accepted: true, acknowledged_event_id: pending });
      expect(work).toMatchObject({ name: 'Bash', isError: false });

      // Codex: held before Claude Code's ack and after it; its own ack freed it.
      expect(answer(codexSaw['check-in'])?.agent_handle).toEqual(expect.any(String));
      expect(codexSaw.held).toContain(`pulse: a replan is pending (event ${pending}`);
      expect(codexSaw['still-held']).toContain(`pulse: a replan is pending (event ${pending}`);
      const codexAck = answer(codexSaw.ack);
      expect(codexAck).toMatchObject({ accepted: true, acknowledged_event_id: pending });
      expect(codexSaw.work).toContain('Process exited with code 0');
      expect(existsSync(join(project, 'a-file')) && existsSync(join(project, 'c-file'))).toBe(true);

      // Three agents, three acks, by three identities.
      expect(new Set([v1Ack.agent_id, claudeAck.agent_id, codexAck.agent_id]).size).toBe(3);
      expect(revisionIn(daemon.output(), CLAUDE_LABEL), 'the daemon log').toBe('2026-07-28');
      expect(revisionIn(daemon.output(), CODEX_LABEL), 'the daemon log').toBe('2026-07-28');

      // --wait named the three as their user knows them, and each ack as it came, in order.
      expect(await guide.exited).toBe(0);
      const waited = guide.output();
      expect(waited).toMatch(new RegExp(`^3 agents must now replan and acknowledge ${pending};`, 'm'));
      const owesIt = waited.split('\n').filter((line) => line.startsWith('  owes it: '));
      for (const label of [CLAUDE_LABEL, CODEX_LABEL, V1_LABEL]) {
        expect(
          owesIt.filter((line) => label.test(line)),
          waited,
        ).toHaveLength(1);
      }
      const acks = waited.split('\n').filter((line) => line.includes(` acknowledged ${pending} `));
      expect(
        acks.map((line) => [V1_LABEL, CLAUDE_LABEL, CODEX_LABEL].findIndex((l) => l.test(line))),
        waited,
      ).toEqual([0, 1, 2]);
      expect(waited.trimEnd().split('\n').at(-1)).toBe(`Every agent has acknowledged ${pending}.`);
    });
  },
);
