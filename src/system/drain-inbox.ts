import type { InboxEvent } from '../../machines/external.js';
import type { PulseSystem } from '../../machines/pulse-system.js';
import { lookUp } from './actors.js';
import { ask } from './ask.js';

/**
 * The effect the wiring provides as the gate's `drainInbox`: asks the inbox actor (system id
 * `inbox`) to drain and resolves with what it took. The inbox drains synchronously in `ready`;
 * while it is still loading it ignores the request, and this rejects, having taken nothing.
 */
export const drainFromInbox = async (system: PulseSystem, timeoutMs = 1_000): Promise<InboxEvent[]> => {
  const inbox = lookUp(system, 'inbox');
  if (inbox === undefined) throw new Error('No inbox actor in the system.');
  if (!inbox.getSnapshot().matches('ready')) throw new Error('The inbox is still loading.');
  return ask(inbox, (asking) => ({ type: 'inbox.drain', ...asking }), { timeoutMs });
};
