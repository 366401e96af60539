import { describe, expect, it } from 'vitest';
import { FORGOTTEN_SESSION } from '../../machines/hook-sessions.js';
import { decide, type HookFacts } from '../../src/hooks/decide.js';
import type { HookCall } from '../../src/hooks/hook-input.js';

/*
 * The hooks while pulse cannot see guidance: they hold as for a pending replan, with a
 * reason that names the file, the error and the fix; a stop is held once for the same blind spot.
 */

const LOOP = {
  file: '.pulse/guidance.md',
  reason: 'is a symlink loop (ELOOP): replace it with a regular file',
};
const call = (phase: HookCall['phase'], tool: HookCall['tool'] = null): HookCall => ({
  agent: 'claude',
  event: phase,
  phase,
  session: 's',
  cwd: '/project',
  answeredAgentId: null,
  tool,
});
const facts = (overrides: Partial<HookFacts> = {}): HookFacts => ({
  pending: null,
  blind: [LOOP],
  delivery: null,
  memory: FORGOTTEN_SESSION,
  pulseTool: false,
  toolAllowed: false,
  ...overrides,
});

describe('decide, while pulse cannot see the guidance', () => {
  it('holds a tool call it does not need to replan, naming the file, the error and the fix', () => {
    const { verdict } = decide(
      call('pre-tool', { name: 'Bash', command: 'rm -rf src' }),
      facts({ toolWhy: 'rm is not a known reader' }),
    );
    expect(verdict.hold).toMatch(/^pulse: the plan is on hold because pulse cannot see or record changes/);
    expect(verdict.hold).toContain(
      '.pulse/guidance.md is a symlink loop (ELOOP): replace it with a regular file.',
    );
    expect(verdict.hold).toContain('this shell command (rm is not a known reader)');
  });

  it('lets reading, planning and pulse’s tools run', () => {
    expect(decide(call('pre-tool', { name: 'Read' }), facts({ toolAllowed: true })).verdict).toEqual({});
  });

  it('names a pending replan too, with its steps', () => {
    const pending = { event_id: 'evt_1', files: ['.pulse/constraints.md'] };
    const { verdict } = decide(call('pre-tool', { name: 'Write' }), facts({ pending }));
    expect(verdict.hold).toContain('.pulse/guidance.md is a symlink loop');
    expect(verdict.hold).toContain('call pulse_ack_replan with event_id "evt_1"');
  });

  it('holds a stop once for the same blind spot, then tells the user it is still there', () => {
    const first = decide(call('stop'), facts());
    expect(first.verdict.hold).toMatch(/Do not stop yet/);
    const again = decide(call('stop'), facts({ memory: { ...FORGOTTEN_SESSION, ...first.remember } }));
    expect(again.verdict).toEqual({
      notice: expect.stringMatching(
        /^pulse: guidance and constraints changes are not enforced until this is fixed/,
      ),
    });
  });

  it('tells a session once, as context, at its start or prompt', () => {
    const first = decide(call('prompt'), facts());
    expect(first.verdict.context).toMatch(/cannot see or record changes/);
    expect(
      decide(call('prompt'), facts({ memory: { ...FORGOTTEN_SESSION, ...first.remember } })).verdict,
    ).toEqual({
      context: undefined,
    });
  });

  it('tells nothing more at the prompt that follows a held stop (Gemini sends the reason back as one)', () => {
    const pending = { event_id: 'evt_1', files: ['.pulse/guidance.md'] };
    const stop = decide(call('stop'), facts({ pending, blind: [] }));
    expect(stop.verdict.hold).toContain('Do not stop yet');
    const prompt = decide(
      call('prompt'),
      facts({ pending, blind: [], memory: { ...FORGOTTEN_SESSION, ...stop.remember } }),
    );
    expect(prompt.verdict).toEqual({ context: undefined });
    expect(decide(call('prompt'), facts({ pending, blind: [] })).verdict.context).toContain('evt_1');
  });

  it('holds nothing once it sees again, with nothing pending', () => {
    expect(
      decide(call('pre-tool', { name: 'Bash', command: 'rm -rf src' }), facts({ blind: [] })).verdict,
    ).toEqual({});
  });
});
