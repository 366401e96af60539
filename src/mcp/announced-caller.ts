import { randomBytes } from 'node:crypto';
import { type CallerMarks, handleParty, needsHandle, type PartyKey } from '../../machines/agent-identity.js';
import { mayBeOneAgent } from '../../machines/agent-products.js';
import { announcedCall } from '../../machines/hook-sessions-decisions.js';
import type { PulseActor } from '../../machines/pulse.js';
import { handleOfAgent } from '../../machines/replan-agents.js';
import type { PULSE_TOOLS } from '../hooks/pulse-tools.js';
import { hearAgent, hooksOf, replanOf, tieAgents } from '../system/ask-actors.js';

/** A fresh handle for a caller without MCP sessions: unguessable, so no other agent acks with it by chance. */
export const mintHandle = (): string => randomBytes(12).toString('base64url');

/**
 * The marks of a 2026-07-28 call that passed no handle, completed from its agent's hooks: the hook
 * session whose pre-tool hook announced this very call is the caller, so the call goes by that
 * agent's handle (minted now, and tied to the hook session, when it has none yet). Marks that need
 * no handle, or a call no hook announced, come back as they are.
 */
export const announcedMarks = (
  actor: PulseActor,
  tool: (typeof PULSE_TOOLS)[number],
  marks: CallerMarks,
): CallerMarks => {
  if (!needsHandle(marks)) return marks;
  const call = announcedCall(hooksOf(actor).getSnapshot().context.pulseCalls, {
    tool,
    useId: marks.useId ?? null,
    mayBeHost: (host) => mayBeOneAgent(marks.client ?? null, host),
    now: Date.now(),
  });
  if (call === null) return marks;
  const known = handleOfAgent(replanOf(actor).getSnapshot().context.agents, call.party);
  if (known !== undefined) return { ...marks, handle: known };
  const handle = mintHandle();
  const party: PartyKey = handleParty(handle);
  hearAgent(actor, call.party);
  hearAgent(actor, party, false, marks.client);
  tieAgents(actor, party, call.party, 'hook-announced');
  return { ...marks, handle };
};
