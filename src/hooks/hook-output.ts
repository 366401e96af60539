import type { Verdict } from './decide.js';
import type { HookPhase } from './dialect.js';
import { dialectOf, type HookAgent } from './events.js';
import type { HookCall } from './hook-input.js';

/** The JSON a hook prints for a verdict, in the agent's own format. */
export const formatVerdict = (call: Pick<HookCall, 'agent' | 'event' | 'phase'>, verdict: Verdict): string =>
  JSON.stringify(dialectOf(call.agent).write(call.event, call.phase, verdict));

/** What a hook prints to change nothing: when the daemon is down or the input is unreadable. */
export const letBe = (agent: HookAgent, event: string | undefined, phase: HookPhase | undefined): string =>
  phase === undefined ? '{}' : formatVerdict({ agent, event: event ?? '', phase }, {});

/** The warning a hook that does not enforce gives the user, on one line. */
export const notEnforcing = (why: string): string =>
  `pulse: ${why.replace(/\s*\n\s*/g, ' ')}; not enforcing replans.`;

/**
 * "Change nothing", with the one line saying why pulse is not enforcing where the agent shows it
 * (Claude Code and Codex: a `systemMessage`; Codex shows no hook's stderr); an agent whose answers
 * have no place for it gets plain "change nothing". An event pulse does not know is answered as
 * one that only reports (a session start).
 */
export const letBeSaying = (
  agent: HookAgent,
  event: string | undefined,
  phase: HookPhase | undefined,
  line: string,
): string => formatVerdict({ agent, event: event ?? '', phase: phase ?? 'session-start' }, { notice: line });
