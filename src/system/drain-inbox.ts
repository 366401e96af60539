import { waitFor } from 'xstate';
import type { InboxEvent } from '../../machines/external.js';
import type { PulseSystem } from '../../machines/pulse-system.js';
import { lookUp } from './actors.js';

/**
 * The effect the wiring provides as the gate's `drainInbox`: asks the inbox actor (system id
 * `inbox`) to drain and reads what it took from its `lastDrain`. The inbox drains synchronously
 * in `ready`; while it is still loading it ignores the request, and this rejects, having taken
 * nothing.
 */
export const drainFromInbox = async (
  system: PulseSystem,
  requestId: number,
  timeoutMs = 1_000,
): Promise<InboxEvent[]> => {
  const inbox = lookUp(system, 'inbox');
  if (inbox === undefined) throw new Error('No inbox actor in the system.');
  if (!inbox.getSnapshot().matches('ready')) throw new Error('The inbox is still loading.');
  inbox.send({ type: 'inbox.drain', requestId });
  const snapshot = await waitFor(inbox, (s) => s.context.lastDrain?.requestId === requestId, {
    timeout: timeoutMs,
  });
  return snapshot.context.lastDrain!.events;
};
