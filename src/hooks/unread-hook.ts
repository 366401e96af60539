import type { PulseActor } from '../../machines/pulse.js';
import { replanOf } from '../system/ask-actors.js';
import { reconcileWithin } from './answer-hook.js';
import type { HookPhase } from './dialect.js';
import type { HookAgent } from './events.js';
import { formatVerdict } from './hook-output.js';
import { unreadHeldReason } from './messages.js';

/**
 * What holds an agent's calls in the project now, if anything, once the files are scanned: the
 * replan someone (or a newcomer) owes, by its event id; or, with none, a blind spot, a log still
 * loading, or a scan that did not end in time.
 */
const holding = async (actor: PulseActor): Promise<{ eventId: string | null } | null> => {
  const read = await reconcileWithin(actor);
  const snapshot = replanOf(actor).getSnapshot();
  const { pendingEventId, unclaimed, blind } = snapshot.context;
  const eventId = pendingEventId ?? unclaimed.pendingEventId;
  return eventId !== null || blind.length > 0 || !read || snapshot.matches('loading') ? { eventId } : null;
};

/**
 * The answer to a hook whose input is over the body limit, unread, for the projects it may be for:
 * its session and tool are unknown, so a tool call is held while any agent there owes a replan
 * (fail closed; an answer of 413 would let it run, since a hook that gets no answer lets the agent
 * go on), and anything else is let be.
 */
export const answerUnreadHook = async (
  actors: readonly PulseActor[],
  call: { agent: HookAgent; event: string; phase: HookPhase },
  maxBytes: number,
): Promise<string> => {
  const holds = call.phase === 'pre-tool' ? await Promise.all(actors.map(holding)) : [];
  const hold = holds.find((h) => h !== null);
  return formatVerdict(call, hold ? { hold: unreadHeldReason(maxBytes, hold.eventId) } : {});
};
