import type { HookPhase } from './dialect.js';
import { HOOK_AGENTS, type HookAgent, hookEvents, isHookAgent, phaseOf } from './events.js';

/** A hook pulse answers: the agent and event its route names, and where the event runs. */
export interface KnownHook {
  agent: HookAgent;
  event: string;
  phase: HookPhase;
}

/** Why an event is not one pulse answers for the agent, listing those it does. */
export const unknownEvent = (agent: HookAgent, event: string): string =>
  `"${event}" is not a ${agent} hook event pulse answers (${hookEvents(agent).join(', ')})`;

/** The hook `/hook/<agent>/<event>` names, or the sentence refusing it (answered 404). */
export const hookTarget = (agent: string, event: string): KnownHook | { refusal: string } => {
  if (!isHookAgent(agent))
    return { refusal: `No hooks for "${agent}": pulse answers ${HOOK_AGENTS.join(', ')}.` };
  const phase = phaseOf(agent, event);
  return phase === undefined ? { refusal: `${unknownEvent(agent, event)}.` } : { agent, event, phase };
};

/** Why a daemon does not enforce a hook for a project it does not serve. */
export const notServed = (served: readonly string[], asked: string): string =>
  `the daemon on this port serves ${served.join(', ') || 'no project'}, not ${asked}`;
