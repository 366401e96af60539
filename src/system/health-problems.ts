import { faultList } from '../../machines/log-faults.js';
import type { PulseActor } from '../../machines/pulse.js';
import { faultSentence } from '../mcp/blind-reason.js';
import { logOf } from './ask-actors.js';
import { watcherWarning } from './read-status.js';

/**
 * Why the daemon cannot observe or persist `.pulse/` now, one sentence each (the log that failed
 * to load, a scan that threw, each file it cannot read or write); empty while all is well.
 * `/healthz` answers 503 while there is any.
 */
export const healthProblems = (actor: PulseActor): string[] => {
  const { context } = logOf(actor).getSnapshot();
  const watcher = watcherWarning(actor);
  return [
    ...(context.lastError === null ? [] : [context.lastError]),
    ...faultList(context.faults).map(faultSentence),
    ...(watcher === null ? [] : [watcher]),
  ];
};
