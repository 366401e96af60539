import { faultList } from '../../machines/log-faults.js';
import type { PulseActor } from '../../machines/pulse.js';
import { logOf, sourcesOf } from './ask-actors.js';
import { faultSentence } from './blind-reason.js';
import { watcherWarning } from './read-status.js';
import { untrustedOf } from './untrusted-notice.js';

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

/**
 * What `/healthz` says beside its problems without answering 503: sources.json not trusted is the
 * user's decision to make, not a fault of the daemon, which serves the replan protocol meanwhile.
 */
export const healthNotices = (actor: PulseActor): string[] => {
  const sources = (sourcesOf(actor) as ReturnType<typeof sourcesOf> | undefined)?.getSnapshot().context;
  const untrusted = sources === undefined ? null : untrustedOf(sources);
  return untrusted === null ? [] : [untrusted.notice];
};
