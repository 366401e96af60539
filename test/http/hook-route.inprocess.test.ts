import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HOOK_AGENTS } from '../../src/hooks/events.js';
import { replanOf } from '../../src/system/ask-actors.js';
import { save } from '../support/files.js';
import { type InProcessApp, inProcessApp } from './in-process-app.js';

/*
 * `POST /hook/:agent/:event` in process, on a real actor system over a temp project: its body
 * limit, the answers that let the agent go on with one line, and a held and an allowed call in
 * Claude Code's format. The same through `pulse hook` and a spawned daemon: test/e2e/hooks.test.ts.
 */

type Output = Record<string, unknown>;

let served: InProcessApp;
beforeEach(async () => {
  served = await inProcessApp();
});
afterEach(() => served.stop());

const claudeInput = (event: string, extra: Output = {}): Output => ({
  session_id: 'session-1',
  cwd: served.project,
  hook_event_name: event,
  ...extra,
});
const tool = (tool_name: string, tool_input: Output) =>
  claudeInput('PreToolUse', { tool_name, tool_input, tool_use_id: 'toolu_01' });
const post = (path: string, body: string) =>
  served.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
const hook = async (event: string, input: Output) => {
  const answer = await post(`/hook/claude/${event}`, JSON.stringify(input));
  expect(answer.status).toBe(200);
  return (await answer.json()) as Output;
};
/** Why Claude Code was told not to run the tool; null when it may. */
const heldReason = (output: Output) =>
  ((output.hookSpecificOutput as Output | undefined)?.permissionDecisionReason as string | undefined) ?? null;

const changeGuidance = () =>
  save(join(served.project, '.pulse', 'guidance.md'), '# Guidance\n\nUse the new API; drop the old one.\n');

describe('the hook route, in process', () => {
  it('answers a body over 1 MiB unread: holds a tool call while a replan is pending, else lets it be', async () => {
    const huge = () =>
      post(
        '/hook/claude/PreToolUse',
        JSON.stringify(tool('Bash', { command: 'npm test', pad: 'x'.repeat(1 << 20) })),
      );
    const calm = await huge();
    expect(calm.status).toBe(200);
    expect(await calm.json()).toEqual({});
    // No wait after the save: the unread answer scans the files too.
    await changeGuidance();
    const pending = await huge();
    expect(pending.status).toBe(200);
    const eventId = replanOf(served.actor).getSnapshot().context.unclaimed.pendingEventId;
    expect(heldReason((await pending.json()) as Output)).toMatch(
      new RegExp(
        `^pulse: a replan is pending \\(event ${eventId}\\), and this tool call's hook input is over 1048576 bytes`,
      ),
    );
    const stop = await post(
      '/hook/claude/Stop',
      JSON.stringify({ ...claudeInput('Stop'), pad: 'x'.repeat(1 << 20) }),
    );
    expect(await stop.json()).toEqual({});
    expect(heldReason(await hook('PreToolUse', tool('Read', { file_path: 'a' })))).toBeNull();
  });

  it('answers inputs of up to 1 MiB at once, holding their writes while a replan is pending', async () => {
    await changeGuidance();
    const room = (1 << 20) - 300;
    const commands = [
      'rm -rf build '.padEnd(room, 'a'),
      `cat ${'{a,'.repeat(room / 3)}`,
      `cat "${'$'.repeat(room)}"`,
    ];
    for (const command of commands) {
      const started = performance.now();
      const held = heldReason(await hook('PreToolUse', tool('Bash', { command })));
      expect(performance.now() - started).toBeLessThan(2000);
      expect(held).toContain(
        `pulse held this shell command (is too long to judge (${command.length} characters`,
      );
    }
    const write = await hook(
      'PreToolUse',
      tool('Write', { file_path: 'src/a.ts', content: 'x'.repeat(room) }),
    );
    expect(heldReason(write)).toContain('pulse held the tool Write');
    // A field echoed in the one-line warning: 512 KiB of blanks once took the line-joining pattern minutes.
    const blanks = `${' '.repeat(1 << 19)}x\n y`;
    const started = performance.now();
    const odd = await post(
      '/hook/vscode/PreToolUse',
      JSON.stringify({ hookEventName: blanks, sessionId: 's', cwd: served.project }),
    );
    expect(performance.now() - started).toBeLessThan(2000);
    expect(odd.status).toBe(200);
  });

  it('lets the agent go on with one line when its input is not JSON, or names another project', async () => {
    const notJson = await post('/hook/claude/PreToolUse', '{"session_id":');
    expect(notJson.status).toBe(200);
    expect(await notJson.json()).toEqual({
      systemMessage: expect.stringMatching(
        /^pulse: the claude hook input is not JSON \(.+\); not enforcing replans\.$/,
      ),
    });
    const elsewhere = await post(
      '/hook/claude/PreToolUse?project=%2Fsomewhere%2Felse',
      JSON.stringify(tool('Bash', { command: 'npm test' })),
    );
    expect(await elsewhere.json()).toEqual({
      systemMessage: `pulse: the daemon on this port serves ${served.project}, not /somewhere/else; not enforcing replans.`,
    });
  });

  it('answers 404 naming what it answers for an agent or an event it has no dialect for', async () => {
    const input = JSON.stringify(tool('Bash', { command: 'npm test' }));
    const agent = await post('/hook/windsurf/PreToolUse', input);
    expect(agent.status).toBe(404);
    expect(await agent.text()).toBe(`No hooks for "windsurf": pulse answers ${HOOK_AGENTS.join(', ')}.`);
    const event = await post('/hook/cursor/PreToolUse', input);
    expect(event.status).toBe(404);
    expect(await event.text()).toMatch(/^"PreToolUse" is not a cursor hook event pulse answers \(.*\)\.$/);
  });

  it('refuses an unknown hook in the same sentence whatever the project or the body size', async () => {
    const sentence = `No hooks for "windsurf": pulse answers ${HOOK_AGENTS.join(', ')}.`;
    const small = JSON.stringify(tool('Bash', { command: 'npm test' }));
    const huge = JSON.stringify(tool('Bash', { command: 'npm test', pad: 'x'.repeat(1 << 20) }));
    for (const [path, body] of [
      ['/hook/windsurf/PreToolUse?project=%2Fsomewhere%2Felse', small],
      ['/hook/windsurf/PreToolUse', huge],
      ['/hook/windsurf/PreToolUse?project=%2Fsomewhere%2Felse', huge],
    ] as const) {
      const answer = await post(path, body);
      expect(answer.status, path).toBe(404);
      expect(await answer.text(), path).toBe(sentence);
    }
  });

  it('holds a shell command while a replan is pending, saying how to release it, and lets reading run', async () => {
    expect(
      heldReason(await hook('PreToolUse', tool('Bash', { command: 'npm test' }))),
      'nothing pending',
    ).toBeNull();
    // No wait after the save: the route scans the files before it answers.
    await changeGuidance();
    const held = heldReason(await hook('PreToolUse', tool('Bash', { command: 'npm test' })));
    const eventId = replanOf(served.actor).getSnapshot().context.unclaimed.pendingEventId;
    expect(eventId).toMatch(/^evt_/);
    expect(held).toContain(
      `pulse: a replan is pending (event ${eventId}; the user changed .pulse/guidance.md).`,
    );
    expect(held).toContain(`call pulse_ack_replan with event_id "${eventId}" and agent "claude:session-1"`);
    expect(heldReason(await hook('PreToolUse', tool('Read', { file_path: 'src/a.ts' })))).toBeNull();
    expect(heldReason(await hook('PreToolUse', tool('Bash', { command: 'cat src/a.ts' })))).toBeNull();
  });

  it('holds the stop once for the pending event, then lets it be and tells the user', async () => {
    await changeGuidance();
    const first = await hook('Stop', claudeInput('Stop', { stop_hook_active: false }));
    expect(first).toMatchObject({ decision: 'block', reason: expect.stringContaining('Do not stop yet') });
    const again = await hook('Stop', claudeInput('Stop', { stop_hook_active: true }));
    expect(again.decision).toBeUndefined();
    expect(again.systemMessage).toMatch(/^pulse: replan evt_\S+ is still pending/);
  });
});
