import { describe, expect, it } from 'vitest';
import { holdsCall } from '../../harness/hook-answers.js';
import type { HookAgent } from '../../src/hooks/events.js';
import { formatVerdict, letBe, letBeSaying } from '../../src/hooks/hook-output.js';

const EVENT_ID = 'evt_0000000000000000000000000042';
const EVENTS: Record<HookAgent, string> = {
  claude: 'PreToolUse',
  codex: 'PreToolUse',
  cursor: 'beforeShellExecution',
  gemini: 'BeforeTool',
  copilot: 'preToolUse',
  vscode: 'PreToolUse',
  opencode: 'tool.execute.before',
};

/** What the daemon prints for a held call, in the agent's format. */
const held = (agent: HookAgent, eventId: string) =>
  formatVerdict(
    { agent, event: EVENTS[agent], phase: 'pre-tool' },
    { hold: `A replan is pending (${eventId}).` },
  );

describe.each(Object.keys(EVENTS) as HookAgent[])("the bench's check of a %s hook answer", (agent) => {
  const event = EVENTS[agent];

  it('takes a refusal naming the pending event as holding the call', () => {
    expect(holdsCall(agent, held(agent, EVENT_ID), EVENT_ID)).toBe(true);
  });

  it('does not take the fail-open answers, a refusal of another event, or no JSON, as holding it', () => {
    expect(holdsCall(agent, letBe(agent, event, 'pre-tool'), EVENT_ID)).toBe(false);
    expect(
      holdsCall(agent, letBeSaying(agent, event, 'pre-tool', 'pulse: daemon not reachable'), EVENT_ID),
    ).toBe(false);
    expect(holdsCall(agent, held(agent, 'evt_other'), EVENT_ID)).toBe(false);
    expect(holdsCall(agent, '', EVENT_ID)).toBe(false);
    expect(holdsCall(agent, 'pulse: the daemon is not running', EVENT_ID)).toBe(false);
  });

  it("does not take the other format's refusal: each agent reads only its own", () => {
    const other: HookAgent = agent === 'cursor' ? 'codex' : 'cursor';
    expect(holdsCall(agent, held(other, EVENT_ID), EVENT_ID)).toBe(false);
  });
});
