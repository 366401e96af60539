import type { ActorRefFrom } from 'xstate';
import type { gateMachine } from '../machines/gate.js';
import type { inboxMachine } from '../machines/inbox.js';
import type { pollerMachine } from '../machines/poller.js';

/**
 * Whether the poller, the inbox or the gate still has work under way at this instant: a stepped
 * clock may move on only once all three are at rest.
 */
export const pipelineBusy = (
  poller: ActorRefFrom<typeof pollerMachine>,
  inbox: ActorRefFrom<typeof inboxMachine>,
  gate: ActorRefFrom<typeof gateMachine>,
): boolean => {
  const p = poller.getSnapshot();
  const i = inbox.getSnapshot();
  const g = gate.getSnapshot();
  return (
    p.matches('polling') ||
    p.matches('offering') ||
    !i.matches({ ready: { offers: 'idle', settlements: 'idle' } }) ||
    i.context.offers.length > 0 ||
    g.matches('reflecting') ||
    g.matches('thinking')
  );
};
