import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackStarted } from '../support/started.js';
import {
  allText,
  type ScriptedModel,
  type Step,
  startAnthropicModel,
  type Turn,
  toolCalls,
} from './anthropic-model.js';
import { inAgentSuite, NO_VERDICT, notices, runClaude } from './claude.js';
import { type HookReply, type HookServer, json, startHookServer } from './hook-server.js';
import { freePort, tempGitProject, writeJson } from './pulse-project.js';

/*
 * Claude Code 2.1.332's HTTP hooks (`{"type": "http", "url", "timeout"}`), against an endpoint of
 * our own: what it sends, and what it does with each kind of answer, above all when the endpoint
 * is down or hangs (test/agents/FINDINGS-claude.md, c). A hook that lets the call run leaves
 * `made` behind; the user's own rule allows that one command.
 */

const started = trackStarted();
const closers: Array<ScriptedModel | HookServer> = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((server) => server.close()));
  await started.cleanUp();
});

const use = (name: string, input: unknown): Turn => [{ type: 'tool_use', name, input }];
const TOUCH = use('Bash', { command: 'touch made', description: 'Create made' });
const USER_RULE = { allow: ['Bash(touch made)'] };

/** A command hook that saves its stdin in `dir` and answers nothing, to compare with what the HTTP hook got. */
const stdinSaver = (dir: string) => ({
  type: 'command',
  command: `"${process.execPath}" -e "const fs=require('fs');fs.writeFileSync(process.argv[1]+'/'+process.hrtime.bigint()+'.json',fs.readFileSync(0))" "${dir}"`,
});

/** An endpoint answering `reply`, and a project whose settings.local.json registers it for `events`. */
const hookedProject = async (
  reply: (call: { path: string; body: Record<string, unknown> }) => HookReply,
  hook: (url: string) => Record<string, unknown> = (url) => ({
    type: 'http',
    url: `${url}/hook`,
    timeout: 3,
  }),
  events = ['PreToolUse'],
) => {
  const server = await startHookServer(reply);
  closers.push(server);
  const project = await tempGitProject(started);
  const hooks = Object.fromEntries(events.map((event) => [event, [{ hooks: [hook(server.url)] }]]));
  await writeJson(project, '.claude/settings.local.json', { permissions: USER_RULE, hooks });
  return { server, project };
};

const runScript = async (project: string, script: Step[], env: Record<string, string> = {}) => {
  const model = await startAnthropicModel({ script });
  closers.push(model);
  const run = await runClaude({ project, modelUrl: model.url, prompt: 'Go.', env });
  expect(model.problems).toEqual([]);
  return { run, model, calls: toolCalls(model.turns().at(-1)!) };
};

const TIMED_OUT = "A hook didn't answer in time, so it didn't check this action.";

describe.skipIf(!inAgentSuite)('Claude Code 2.1.332 HTTP hooks', () => {
  it('POSTs the JSON a command hook reads on stdin, with the headers it names and only the env vars it allows', async () => {
    const saved = await tempGitProject(started);
    const { server, project } = await hookedProject(
      () => ({ body: '' }),
      (url) => ({
        type: 'http',
        url: `${url}/hook`,
        headers: { Authorization: 'Bearer $PULSE_TOKEN', 'X-Other': '$NOT_ALLOWED' },
        allowedEnvVars: ['PULSE_TOKEN'],
      }),
    );
    const settings = JSON.parse(await readFile(join(project, '.claude/settings.local.json'), 'utf8'));
    settings.hooks.PreToolUse[0].hooks.push(stdinSaver(saved));
    await writeJson(project, '.claude/settings.local.json', settings);

    await runScript(project, [() => TOUCH, () => [{ type: 'text', text: 'Done.' }]], {
      PULSE_TOKEN: 'secret',
      NOT_ALLOWED: 'leak',
    });

    const [call] = server.calls;
    expect(call).toMatchObject({ method: 'POST', path: '/hook' });
    expect(call!.headers).toMatchObject({
      'content-type': 'application/json',
      authorization: 'Bearer secret',
      'x-other': '',
    });
    const [file] = (await readdir(saved)).filter((name) => name.endsWith('.json'));
    expect(call!.body).toEqual(JSON.parse(await readFile(join(saved, file!), 'utf8')));
    expect(call!.body).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', cwd: project });
  });

  it.each(['127.0.0.1', 'localhost'])(
    'holds the call on a 2xx permissionDecision "deny" from %s, and the model reads the reason as a tool error',
    async (host) => {
      const reason = 'pulse: a replan is pending (event evt_1).';
      const { project } = await hookedProject(
        () =>
          json({
            hookSpecificOutput: {
              hookEventName: 'PreToolUse',
              permissionDecision: 'deny',
              permissionDecisionReason: reason,
            },
          }),
        (url) => ({ type: 'http', url: `${url.replace('127.0.0.1', host)}/hook`, timeout: 3 }),
      );

      const { calls } = await runScript(project, [() => TOUCH, () => [{ type: 'text', text: 'Held.' }]]);

      expect(calls[0]).toMatchObject({ isError: true, result: `PreToolUse:Bash hook error: ${reason}` });
      expect(existsSync(join(project, 'made'))).toBe(false);
    },
  );

  it.each<[string, HookReply | 'refused', string[]]>([
    ['an empty 200', { body: '' }, []],
    ['a 200 of {}', { body: '{}' }, []],
    ['a 500', { status: 500, body: 'boom' }, [NO_VERDICT]],
    ['a 200 that is not JSON', { body: 'not json' }, [NO_VERDICT]],
    ['a refused connection (the daemon is down)', 'refused', [NO_VERDICT]],
    ['no answer within the timeout', 'hang', [TIMED_OUT]],
  ])(
    'lets the call run on %s (fails open), with these notices in stream-json',
    async (_, reply, expected) => {
      const refused = `http://127.0.0.1:${await freePort()}`;
      const { project } = await hookedProject(
        () => (reply === 'refused' ? { body: '' } : reply),
        (url) => ({ type: 'http', url: `${reply === 'refused' ? refused : url}/hook`, timeout: 2 }),
      );

      const began = Date.now();
      const { calls, run } = await runScript(project, [() => TOUCH, () => [{ type: 'text', text: 'Done.' }]]);

      expect(calls[0]).toMatchObject({ isError: false });
      expect(existsSync(join(project, 'made'))).toBe(true);
      expect(notices(run)).toEqual(expected);
      expect(run.stderr).toBe('');
      if (reply === 'hang') expect(Date.now() - began).toBeGreaterThan(2000);
    },
  );

  it('shows the user a systemMessage as a notice that the model never reads', async () => {
    const { project } = await hookedProject(() => json({ systemMessage: 'pulse: daemon not reachable.' }));

    const { run, model } = await runScript(project, [() => TOUCH, () => [{ type: 'text', text: 'Done.' }]]);

    expect(notices(run)).toEqual(['PreToolUse:Bash says: pulse: daemon not reachable.']);
    expect(model.turns().some((turn) => allText(turn).includes('daemon not reachable'))).toBe(false);
  });

  it('calls no HTTP hook at SessionStart, and passes UserPromptSubmit and PostToolUse context to the model', async () => {
    const context = (event: string) =>
      json({ hookSpecificOutput: { hookEventName: event, additionalContext: `context from ${event}` } });
    const { server, project } = await hookedProject(
      ({ body }) => context(String(body.hook_event_name)),
      (url) => ({ type: 'http', url: `${url}/hook`, timeout: 3 }),
      ['SessionStart', 'UserPromptSubmit', 'PostToolUse'],
    );

    const { model } = await runScript(project, [() => TOUCH, () => [{ type: 'text', text: 'Done.' }]]);

    expect(server.calls.map((call) => call.body.hook_event_name)).toEqual([
      'UserPromptSubmit',
      'PostToolUse',
    ]);
    const [first, second] = model.turns();
    expect(allText(first!)).toContain(
      'UserPromptSubmit hook additional context: context from UserPromptSubmit',
    );
    expect(allText(second!)).toContain('PostToolUse:Bash hook additional context: context from PostToolUse');
  });

  it('sends the model back on a Stop "block", with the reason as hook feedback', async () => {
    let stops = 0;
    const { project } = await hookedProject(
      () => (++stops === 1 ? json({ decision: 'block', reason: 'pulse: replan first.' }) : { body: '' }),
      (url) => ({ type: 'http', url: `${url}/hook`, timeout: 3 }),
      ['Stop'],
    );

    const { model } = await runScript(project, [
      () => [{ type: 'text', text: 'Stopping.' }],
      () => [{ type: 'text', text: 'Stopping again.' }],
    ]);

    const resumed = model.turns()[1]!;
    const feedback = resumed.messages.at(-2)!;
    expect(feedback.role).toBe('user');
    expect(JSON.stringify(feedback.content)).toContain('Stop hook feedback:\\npulse: replan first.');
    expect(allText(resumed)).toContain('Stop hook blocking error from command');
  });
});
