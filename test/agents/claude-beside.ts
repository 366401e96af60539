import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { projectId } from '../../src/store/project-id.js';
import { connectClient } from '../support/daemon.js';
import type { trackStarted } from '../support/started.js';
import { startAnthropicModel, type Turn, toolCalls } from './anthropic-model.js';
import { type ClaudeRun, runClaude } from './claude.js';
import { type PulseProject, setUpAgent } from './pulse-project.js';

// The scene of the two-agent tests: another agent and the real Claude Code in one project on one
// daemon, each with its own scripted model. The user changes the guidance; both are held; the
// other agent replans, acknowledges and runs again while Claude Code is still held; then Claude
// Code acknowledges for itself, and runs.

/** A promise and the function that settles it, to pace one scripted model on the other's steps. */
const signal = () => {
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return { done, resolve };
};

/**
 * The event id a held call's reason names ("… call pulse_ack_replan with event_id "evt_…""). With two
 * CLIs starting at once a hook may find pulse's scan still running and hold for that instead (fail
 * closed); its reason names the pending event the same way.
 */
export const eventIn = (reason: unknown) => /event_id "([^"]+)"/.exec(String(reason ?? ''))?.[1];

const claude = (name: string, input: unknown): Turn => [{ type: 'tool_use', name, input }];

/** Claude Code's side of the scene, and the points the other agent's script paces itself on. */
export interface ClaudeBeside {
  /** Resolves once Claude Code has checked in with pulse: the other agent's script then edits the guidance. */
  checkedIn: Promise<void>;
  /** The other agent's script calls this after the user's edit, with the event pulse logged. */
  edited(pending: string): void;
  /** Resolves once Claude Code has been held the first time. */
  held: Promise<void>;
  /** The other agent's script calls this once it has acknowledged and run again. */
  otherWorked(): void;
  /** `claude -p` on Claude Code's script, until it ends. */
  run(): Promise<ClaudeRun>;
  /** Claude Code was held before the other agent's ack and after it, and ran once it acknowledged itself. */
  expectHeldUntilItsOwnAck(otherAgentId: unknown): void;
}

/**
 * Sets up Claude Code in a project already set up for another agent (`pulse setup claude --write`),
 * adds an MCP client of the user's own (an inspector, another editor) that never acts, so no agent
 * is tied by elimination but each by pulse's answer its after-tool hook saw, and scripts Claude
 * Code: it checks in, is held after the edit, waits until the other agent has run again, is held
 * once more, then reads, replans, acknowledges and runs `touch b-file`.
 */
export const claudeBeside = async (
  started: ReturnType<typeof trackStarted>,
  { project, port }: PulseProject,
): Promise<ClaudeBeside> => {
  await setUpAgent('claude', project, port);
  started.clients.push(await connectClient(`http://127.0.0.1:${port}/p/${projectId(project)}/mcp`));
  const checkedIn = signal();
  const edited = signal();
  const held = signal();
  const otherWorked = signal();
  let pending = '';
  const touchB = claude('Bash', { command: 'touch b-file', description: 'Create b-file' });
  const model = await startAnthropicModel({
    script: [
      () => claude('mcp__pulse__pulse_should_interrupt', {}),
      async () => {
        checkedIn.resolve();
        await edited.done;
        return touchB;
      },
      // Held: it waits until the other agent has acknowledged and run again, then tries once more.
      async () => {
        held.resolve();
        await otherWorked.done;
        return touchB;
      },
      () => claude('Read', { file_path: join(project, '.pulse', 'guidance.md') }),
      () =>
        claude('Write', {
          file_path: join(project, '.pulse', 'plan.md'),
          content: '# Plan\n\nBoth follow.\n',
        }),
      (request) => {
        const heldCall = toolCalls(request).findLast((call) => call.name === 'Bash')?.result;
        return claude('mcp__pulse__pulse_ack_replan', { event_id: eventIn(heldCall) });
      },
      () => touchB,
      () => [{ type: 'text', text: 'Done.' }],
    ],
  });
  started.streams.push({ close: () => void model.close() });
  return {
    checkedIn: checkedIn.done,
    edited: (event) => {
      pending = event;
      edited.resolve();
    },
    held: held.done,
    otherWorked: otherWorked.resolve,
    run: () =>
      runClaude({
        project,
        modelUrl: model.url,
        prompt: 'Carry on, Claude.',
        userSettings: { permissions: { allow: ['Bash(touch b-file)'] } },
      }),
    expectHeldUntilItsOwnAck: (otherAgentId) => {
      expect(model.problems).toEqual([]);
      const [check, heldB, stillHeldB, , , ackB, workB] = toolCalls(model.turns().at(-1)!);
      expect(JSON.parse(check!.result!)).toMatchObject({ needs_replan: false });
      expect(heldB).toMatchObject({ name: 'Bash', isError: true });
      expect(heldB!.result).toContain(`call pulse_ack_replan with event_id "${pending}"`);
      expect(stillHeldB).toMatchObject({ name: 'Bash', isError: true });
      expect(stillHeldB!.result).toContain(`call pulse_ack_replan with event_id "${pending}"`);
      const ack = JSON.parse(ackB!.result!);
      expect(ack).toMatchObject({ accepted: true, acknowledged_event_id: pending });
      expect(otherAgentId).toEqual(expect.any(String));
      expect(ack.agent_id).not.toBe(otherAgentId);
      expect(workB).toMatchObject({ name: 'Bash', isError: false });
      expect(existsSync(join(project, 'b-file'))).toBe(true);
    },
  };
};
