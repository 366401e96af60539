import type { HookPhase, Verdict } from './dialect.js';
import { dialectOf, type HookAgent } from './events.js';
import type { HookCall } from './hook-input.js';

/** The JSON a hook prints for a verdict, in the agent's own format. */
export const formatVerdict = (call: Pick<HookCall, 'agent' | 'event' | 'phase'>, verdict: Verdict): string =>
  JSON.stringify(dialectOf(call.agent).write(call.event, call.phase, verdict));

/** What a hook prints to change nothing: when the daemon is down or the input is unreadable. */
export const letBe = (agent: HookAgent, event: string | undefined, phase: HookPhase | undefined): string =>
  phase === undefined ? '{}' : formatVerdict({ agent, event: event ?? '', phase }, {});

/**
 * Text on one line: a run of blanks with a line break in it becomes one space. Each run is matched
 * once, where the pattern `\s*\n\s*` retried every blank of a long run (quadratic in a run of spaces).
 */
export const oneLine = (text: string): string =>
  text.replace(/\s+/g, (run) => (run.includes('\n') ? ' ' : run));

/** The warning a hook that does not enforce gives the user, on one line. */
export const notEnforcing = (why: string): string => `pulse: ${oneLine(why)}; not enforcing replans.`;

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
