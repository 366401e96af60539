import { type ActorRefFrom, type ActorSystem, waitFor } from 'xstate';
import type { InboxEvent } from '../../machines/external.js';
import type { inboxMachine } from '../../machines/inbox.js';

/**
 * The effect the wiring provides as the gate's `drainInbox`: asks the inbox actor (system id
 * `inbox`) to drain and reads what it took from its `lastDrain`. The inbox drains synchronously
 * in `ready`; while it is still loading it ignores the request, and this rejects, having taken
 * nothing.
 */
export const drainFromInbox = async (
  // biome-ignore lint/suspicious/noExplicitAny: any system holding an `inbox` will do.
  system: ActorSystem<any>,
  requestId: number,
  timeoutMs = 1_000,
): Promise<InboxEvent[]> => {
  const inbox = system.get('inbox') as ActorRefFrom<typeof inboxMachine> | undefined;
  if (inbox === undefined) throw new Error('No inbox actor in the system.');
  if (!inbox.getSnapshot().matches('ready')) throw new Error('The inbox is still loading.');
  inbox.send({ type: 'inbox.drain', requestId });
  const snapshot = await waitFor(inbox, (s) => s.context.lastDrain?.requestId === requestId, {
    timeout: timeoutMs,
  });
  return snapshot.context.lastDrain!.events;
};
