import { describe, expect, it } from 'vitest';
import { FORGOTTEN_SESSION, type HookSessionMemory } from '../../machines/hook-sessions-context.js';
import { decide, type HookFacts } from '../../src/hooks/decide.js';
import type { HookAgent } from '../../src/hooks/events.js';
import type { HookCall } from '../../src/hooks/hook-input.js';

/*
 * What a hook decides: a pending replan holds what the agent does not need to replan and lets
 * the rest run, holds a stop once per pending event, and tells each session of it and of a
 * delivery once (the table); while pulse cannot see guidance the hooks hold as for a pending
 * replan, with a reason that names the file, the error and the fix (fail closed).
 */

const LOOP = {
  file: '.pulse/guidance.md',
  reason: 'is a symlink loop (ELOOP): replace it with a regular file',
};
const PENDING = { event_id: 'evt_1', files: ['.pulse/guidance.md'], agent: 'claude:s' };
const NEWER = { event_id: 'evt_2', files: ['.pulse/constraints.md'], agent: 'claude:s' };
/** The scan did not end within the hook's budget (a busy machine). */
const LATE = {
  file: '.pulse/',
  reason: 'could not be read in time: call pulse_should_interrupt, then try again',
};
const DELIVERY = { delivery_id: 'dlv_1', headlines: ['ci: build failed on main'] };

const call = (
  phase: HookCall['phase'],
  tool: HookCall['tool'] = null,
  { agent = 'claude', subagent }: { agent?: HookAgent; subagent?: boolean } = {},
): HookCall => ({
  agent,
  event: phase,
  phase,
  session: 's',
  cwd: '/project',
  answeredAgentId: null,
  tool,
  ...(subagent === undefined ? {} : { subagent }),
});
const BASH = { name: 'Bash', command: 'npm install left-pad' };
const facts = (overrides: Partial<HookFacts> = {}): HookFacts => ({
  pending: null,
  blind: [],
  delivery: null,
  memory: FORGOTTEN_SESSION,
  pulseTool: false,
  toolAllowed: false,
  ...overrides,
});
/** Facts while pulse cannot see the guidance (a symlink loop). */
const blindFacts = (overrides: Partial<HookFacts> = {}) => facts({ blind: [LOOP], ...overrides });
const memory = (told: Partial<HookSessionMemory>): HookSessionMemory => ({ ...FORGOTTEN_SESSION, ...told });

const held = (...parts: string[]) => ({ hold: expect.stringMatching(new RegExp(parts.join('[\\s\\S]*'))) });
const ATTENTION = 'pulse: external events need attention[\\s\\S]*- ci: build failed on main';

interface Row {
  name: string;
  call: HookCall;
  facts: HookFacts;
  verdict: Record<string, unknown>;
  remember: Partial<HookSessionMemory>;
}

const ROWS: Row[] = [
  // A pending replan and the tool calls.
  {
    name: 'holds a shell command that is more than reading, saying why and how to release it',
    call: call('pre-tool', BASH),
    facts: facts({ pending: PENDING, toolWhy: 'npm is not a known reader' }),
    verdict: held(
      '^pulse: a replan is pending \\(event evt_1; the user changed \\.pulse/guidance\\.md\\)\\.',
      'pulse held this shell command \\(npm is not a known reader\\) until you replan',
      'call pulse_ack_replan with event_id "evt_1" and agent "claude:s"',
    ),
    remember: {},
  },
  {
    name: 'holds another tool by its name',
    call: call('pre-tool', { name: 'Write', paths: ['src/a.ts'] }),
    facts: facts({ pending: PENDING }),
    verdict: held('pulse held the tool Write until you replan'),
    remember: {},
  },
  {
    name: 'lets a read run while a replan is pending',
    call: call('pre-tool', { name: 'Read' }),
    facts: facts({ pending: PENDING, toolAllowed: true }),
    verdict: {},
    remember: {},
  },
  {
    name: 'lets the plan edit run while a replan is pending',
    call: call('pre-tool', { name: 'Edit', paths: ['.pulse/plan.md'] }),
    facts: facts({ pending: PENDING, toolAllowed: true }),
    verdict: {},
    remember: {},
  },
  {
    name: "lets pulse's own tools run while a replan is pending",
    call: call('pre-tool', { name: 'mcp__pulse__pulse_ack_replan' }),
    facts: facts({ pending: PENDING, pulseTool: true, toolAllowed: true }),
    verdict: {},
    remember: {},
  },
  {
    name: 'holds nothing with nothing pending',
    call: call('pre-tool', BASH),
    facts: facts(),
    verdict: {},
    remember: {},
  },
  {
    name: "holds a subagent's tool call as its parent's",
    call: call('pre-tool', BASH, { agent: 'copilot', subagent: true }),
    facts: facts({ pending: PENDING }),
    verdict: held('pulse held this shell command until you replan'),
    remember: {},
  },
  {
    name: "never holds a subagent's stop, which is its parent's to hold",
    call: call('stop', null, { agent: 'copilot', subagent: true }),
    facts: facts({ pending: PENDING }),
    verdict: {},
    remember: {},
  },

  // The stop: once per pending event.
  {
    name: 'holds the first stop for a pending event, and remembers it told the session',
    call: call('stop'),
    facts: facts({ pending: PENDING }),
    verdict: held(
      '^pulse: a replan is pending \\(event evt_1',
      'Do not stop yet',
      'Then continue, or stop\\.$',
    ),
    remember: { stopHeldFor: 'evt_1', toldPending: 'evt_1' },
  },
  {
    name: 'lets the next stop for the same event be, and tells the user it is still pending',
    call: call('stop'),
    facts: facts({ pending: PENDING, memory: memory({ stopHeldFor: 'evt_1', toldPending: 'evt_1' }) }),
    verdict: {
      notice: 'pulse: replan evt_1 is still pending: the agent stopped without acknowledging it.',
    },
    remember: {},
  },
  {
    name: 'holds a stop again for a newer pending event',
    call: call('stop'),
    facts: facts({ pending: NEWER, memory: memory({ stopHeldFor: 'evt_1', toldPending: 'evt_1' }) }),
    verdict: held('event evt_2; the user changed \\.pulse/constraints\\.md', 'Do not stop yet'),
    remember: { stopHeldFor: 'evt_2', toldPending: 'evt_2' },
  },
  {
    name: 'lets a stop be with nothing pending',
    call: call('stop'),
    facts: facts(),
    verdict: { hold: undefined },
    remember: {},
  },

  // A pending replan as context, once per session.
  {
    name: 'tells a session of a pending replan at its start',
    call: call('session-start'),
    facts: facts({ pending: PENDING }),
    verdict: {
      context: expect.stringMatching(/^pulse: a replan is pending \(event evt_1[\s\S]*Before any other work/),
    },
    remember: { toldPending: 'evt_1' },
  },
  {
    name: 'tells it nothing more at the next prompt',
    call: call('prompt'),
    facts: facts({ pending: PENDING, memory: memory({ toldPending: 'evt_1' }) }),
    verdict: { context: undefined },
    remember: {},
  },

  // A delivery of external events, once per session, where the hook can carry news.
  {
    name: 'tells a session of a delivery at a prompt, as facts, with what to call',
    call: call('prompt'),
    facts: facts({ delivery: DELIVERY }),
    verdict: {
      context: expect.stringMatching(
        new RegExp(`^${ATTENTION}[\\s\\S]*pulse_ack_events with its delivery_id\\.$`),
      ),
    },
    remember: { toldDelivery: 'dlv_1' },
  },
  {
    name: 'does not tell the same delivery twice',
    call: call('prompt'),
    facts: facts({ delivery: DELIVERY, memory: memory({ toldDelivery: 'dlv_1' }) }),
    verdict: { context: undefined },
    remember: {},
  },
  {
    name: 'tells a delivery after a tool ran',
    call: call('post-tool', { name: 'Read' }),
    facts: facts({ delivery: DELIVERY }),
    verdict: { context: expect.stringMatching(new RegExp(ATTENTION)) },
    remember: { toldDelivery: 'dlv_1' },
  },
  {
    name: "does not tell a delivery right after pulse's own tool, where the agent has just checked in",
    call: call('post-tool', { name: 'mcp__pulse__pulse_should_interrupt' }),
    facts: facts({ delivery: DELIVERY, pulseTool: true }),
    verdict: { context: undefined },
    remember: {},
  },
  {
    name: 'tells the pending replan and a delivery together at a session start',
    call: call('session-start'),
    facts: facts({ pending: PENDING, delivery: DELIVERY }),
    verdict: {
      context: expect.stringMatching(new RegExp(`^pulse: a replan is pending[\\s\\S]*\n\n${ATTENTION}`)),
    },
    remember: { toldPending: 'evt_1', toldDelivery: 'dlv_1' },
  },
  {
    name: "tells Cursor of a delivery only at its stop (a follow-up message), not at Claude Code's",
    call: call('stop', null, { agent: 'cursor' }),
    facts: facts({ delivery: DELIVERY }),
    verdict: { hold: expect.stringMatching(new RegExp(ATTENTION)) },
    remember: { toldDelivery: 'dlv_1' },
  },
  {
    name: 'tells Cursor nothing of a delivery at a prompt',
    call: call('prompt', null, { agent: 'cursor' }),
    facts: facts({ delivery: DELIVERY }),
    verdict: { context: undefined },
    remember: {},
  },
  {
    name: "lets Claude Code's stop be with a delivery out",
    call: call('stop'),
    facts: facts({ delivery: DELIVERY }),
    verdict: { hold: undefined },
    remember: {},
  },

  // Blind: pulse cannot see the guidance, so it holds as for a pending replan (fail closed).
  {
    name: 'holds a tool call while pulse cannot see the guidance, with nothing pending',
    call: call('pre-tool', BASH),
    facts: blindFacts(),
    verdict: held('^pulse: the plan is on hold because pulse cannot see or record changes', 'symlink loop'),
    remember: {},
  },
  {
    name: 'still lets reading run while blind',
    call: call('pre-tool', { name: 'Read' }),
    facts: blindFacts({ toolAllowed: true }),
    verdict: {},
    remember: {},
  },
  {
    name: 'holds a stop once for the blind spot, keyed by the file, not the pending event',
    call: call('stop'),
    facts: blindFacts({ pending: PENDING }),
    verdict: held('cannot see or record changes', 'Do not stop yet', 'The replan stays to do'),
    remember: {
      stopHeldFor: 'unobservable:.pulse/guidance.md',
      toldPending: 'unobservable:.pulse/guidance.md',
    },
  },
];

describe('decide, while pulse cannot see the guidance', () => {
  it('holds a tool call it does not need to replan, naming the file, the error and the fix', () => {
    const { verdict } = decide(
      call('pre-tool', { name: 'Bash', command: 'rm -rf src' }),
      blindFacts({ toolWhy: 'rm is not a known reader' }),
    );
    expect(verdict.hold).toMatch(/^pulse: the plan is on hold because pulse cannot see or record changes/);
    expect(verdict.hold).toContain(
      '.pulse/guidance.md is a symlink loop (ELOOP): replace it with a regular file.',
    );
    expect(verdict.hold).toContain('this shell command (rm is not a known reader)');
  });

  it('lets reading, planning and pulse’s tools run', () => {
    expect(decide(call('pre-tool', { name: 'Read' }), blindFacts({ toolAllowed: true })).verdict).toEqual({});
  });

  it('names a pending replan too, with its steps', () => {
    const pending = { event_id: 'evt_1', files: ['.pulse/constraints.md'] };
    const { verdict } = decide(call('pre-tool', { name: 'Write' }), blindFacts({ pending }));
    expect(verdict.hold).toContain('.pulse/guidance.md is a symlink loop');
    expect(verdict.hold).toContain('call pulse_ack_replan with event_id "evt_1"');
  });

  it('holds a stop once for the same blind spot, then tells the user it is still there', () => {
    const first = decide(call('stop'), blindFacts());
    expect(first.verdict.hold).toMatch(/Do not stop yet/);
    const again = decide(call('stop'), blindFacts({ memory: { ...FORGOTTEN_SESSION, ...first.remember } }));
    expect(again.verdict).toEqual({
      notice: expect.stringMatching(
        /^pulse: guidance and constraints changes are not enforced until this is fixed/,
      ),
    });
  });

  it('tells a session once, as context, at its start or prompt', () => {
    const first = decide(call('prompt'), blindFacts());
    expect(first.verdict.context).toMatch(/cannot see or record changes/);
    expect(
      decide(call('prompt'), blindFacts({ memory: { ...FORGOTTEN_SESSION, ...first.remember } })).verdict,
    ).toEqual({
      context: undefined,
    });
  });

  it('tells nothing more at the prompt that follows a held stop (Gemini sends the reason back as one)', () => {
    const pending = { event_id: 'evt_1', files: ['.pulse/guidance.md'] };
    const stop = decide(call('stop'), facts({ pending }));
    expect(stop.verdict.hold).toContain('Do not stop yet');
    const prompt = decide(
      call('prompt'),
      facts({ pending, memory: { ...FORGOTTEN_SESSION, ...stop.remember } }),
    );
    expect(prompt.verdict).toEqual({ context: undefined });
    expect(decide(call('prompt'), facts({ pending })).verdict.context).toContain('evt_1');
  });

  it('holds a stop when a late scan hides whether anything changed, with nothing known pending', () => {
    const stop = decide(call('stop'), facts({ late: LATE }));
    expect(stop.verdict.hold).toMatch(/could not be read in time[\s\S]*Do not stop yet/);
    expect(decide(call('pre-tool', BASH), facts({ late: LATE })).verdict.hold).toContain('pulse held');
  });

  it('holds a stop once per pending event, whether the scan before it was late or not', () => {
    const slowFirst = decide(call('stop'), facts({ pending: PENDING, late: LATE }));
    expect(slowFirst.verdict.hold).toContain('event_id "evt_1"');
    const after = { ...FORGOTTEN_SESSION, ...slowFirst.remember };
    expect(decide(call('stop'), facts({ pending: PENDING, memory: after })).verdict).toEqual({
      notice: expect.stringContaining('replan evt_1 is still pending'),
    });
    const heldFirst = decide(call('stop'), facts({ pending: PENDING }));
    const slowAfter = decide(
      call('stop'),
      facts({ pending: PENDING, late: LATE, memory: { ...FORGOTTEN_SESSION, ...heldFirst.remember } }),
    );
    expect(slowAfter.verdict).toEqual({ notice: expect.stringContaining('replan evt_1 is still pending') });
    expect(
      decide(call('stop'), facts({ pending: NEWER, late: LATE, memory: after })).verdict.hold,
      'a newer event holds again',
    ).toContain('event_id "evt_2"');
  });

  it('holds nothing once it sees again, with nothing pending', () => {
    expect(decide(call('pre-tool', { name: 'Bash', command: 'rm -rf src' }), facts()).verdict).toEqual({});
  });
});

describe('decide', () => {
  it.each(ROWS)('$name', (row) => {
    expect(decide(row.call, row.facts)).toEqual({ verdict: row.verdict, remember: row.remember });
  });
});
