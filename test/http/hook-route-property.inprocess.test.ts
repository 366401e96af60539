import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdsCall } from '../../harness/hook-answers.js';
import { HOOK_AGENTS, hookEvents } from '../../src/hooks/events.js';
import { reconcile, replanOf } from '../../src/system/ask-actors.js';
import { save } from '../support/files.js';
import { SHELL_HOOKS } from '../support/shell-hook-inputs.js';
import { SHELL_SHAPES } from '../support/shell-shapes.js';
import { type InProcessApp, inProcessApp } from './in-process-app.js';

/*
 * Generated hook bodies against `POST /hook/:agent/:event`, in process, with a replan pending: any
 * body for any agent's event is answered (never a throw, never a 500) within the bound, and every
 * shell command that writes is held, whatever text follows it. fast-check prints the seed to replay.
 */

/** Generous: a hook answers in milliseconds; the judge stops at 500 ms, the hook's own limit is 8 s. */
const BOUND_MS = 3000;

let served: InProcessApp;
let eventId: string;
beforeAll(async () => {
  served = await inProcessApp();
  await save(join(served.project, '.pulse', 'guidance.md'), '# Guidance\n\nUse the new API.\n');
  await reconcile(served.actor);
  eventId = replanOf(served.actor).getSnapshot().context.unclaimed.pendingEventId!;
  expect(eventId).toMatch(/^evt_/);
});
afterAll(() => served.stop());

const post = async (path: string, body: string) => {
  const started = performance.now();
  const response = await served.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  return { status: response.status, text, took: performance.now() - started };
};

/** Text to follow a command: anything, bash-like, or a pathological shape at some length. */
const tail = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({
    unit: fc.constantFrom('{', 'a', ',', '$', '(', ')', '"', "'", '`', '\\', '|', '<', ' ', '\n'),
    maxLength: 3000,
  }),
  fc
    .tuple(fc.constantFrom(...SHELL_SHAPES), fc.integer({ min: 1, max: 12_000 }))
    .map(([shape, n]) => shape.line(n)),
);

const agent = fc.constantFrom(...HOOK_AGENTS);

describe('the hook route on generated bodies, a replan pending', () => {
  it('holds every shell command that writes, whatever follows it, within the bound', async () => {
    await fc.assert(
      fc.asyncProperty(agent, tail, fc.string({ maxLength: 20 }), async (name, rest, session) => {
        const hook = SHELL_HOOKS[name];
        const body = JSON.stringify(hook.input(`rm -rf build ${rest}`, served.project, `s-${session}`));
        const answer = await post(`/hook/${name}/${hook.event}`, body);
        expect(answer.status).toBe(200);
        expect(holdsCall(name, answer.text, eventId), answer.text).toBe(true);
        expect(answer.took).toBeLessThan(BOUND_MS);
      }),
      { numRuns: 120 },
    );
  }, 120_000);

  it('answers any body for any event of any agent with 200 within the bound', async () => {
    const fields = fc.dictionary(
      fc.constantFrom(
        'session_id',
        'sessionId',
        'cwd',
        'hook_event_name',
        'hookEventName',
        'tool_name',
        'tool_input',
        'toolName',
        'toolArgs',
        'command',
        'input',
        'output',
        'directory',
        'tool_response',
        'prompt',
      ),
      fc.oneof(fc.jsonValue(), tail),
    );
    const body = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 500 }),
      fc.json(),
      fields.map((object) => JSON.stringify(object)),
      fc
        .tuple(agent, tail, fields)
        .map(([name, rest, extra]) =>
          JSON.stringify({ ...SHELL_HOOKS[name].input(rest, served.project, 's'), ...extra }),
        ),
    );
    const call = agent.chain((name) => fc.tuple(fc.constant(name), fc.constantFrom(...hookEvents(name))));
    await fc.assert(
      fc.asyncProperty(call, body, async ([name, event], text) => {
        const answer = await post(`/hook/${name}/${event}`, text);
        expect(answer.status, answer.text).toBe(200);
        expect(() => JSON.parse(answer.text)).not.toThrow();
        expect(answer.took).toBeLessThan(BOUND_MS);
      }),
      { numRuns: 200 },
    );
  }, 120_000);
});
