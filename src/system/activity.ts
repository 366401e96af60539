import type { Logger } from 'pino';
import type { AnyActorRef, SnapshotFrom } from 'xstate';
import type { PulseActor } from '../../machines/pulse.js';
import type { PulseSystemId } from '../../machines/pulse-system.js';
import type { sourcesMachine } from '../../machines/sources.js';
import { pollerId } from '../../machines/sources-context.js';
import { lookUp, systemOf } from '../system/actors.js';
import {
  eventLogRule,
  focusRule,
  gateRule,
  inboxRule,
  notifyRule,
  pollerRule,
  type Rule,
  replanRule,
  sourcesRule,
  steerRule,
  watcherRule,
} from './activity-rules.js';

type Unfollow = () => void;

/** Runs `rule` on each snapshot change of `ref`; a rule that throws never reaches the actor. */
const follow = <S>(ref: AnyActorRef, rule: Rule<S>, log: Logger): Unfollow => {
  let previous: S | undefined;
  const see = (snapshot: S) => {
    try {
      if (snapshot !== previous) rule(previous, snapshot, log);
    } catch (error) {
      log.error({ error: String(error) }, 'the activity log failed on a change');
    }
    previous = snapshot;
  };
  see(ref.getSnapshot() as S);
  const subscription = ref.subscribe({ next: (snapshot) => see(snapshot as S), error: () => {} });
  return () => subscription.unsubscribe();
};

/**
 * The activity log: a read-only observer of the actors' snapshots that logs what a user wants to
 * read (a replan pending and acknowledged, deliveries, dead letters, failing and recovered
 * sources, sources.json reloads, focus), on transitions only. Pollers come and go with
 * sources.json: each is followed from when it starts. Returns the function that stops it.
 */
export const observeActivity = (actor: PulseActor, log: Logger): Unfollow => {
  const system = systemOf(actor);
  const followed: Unfollow[] = [];
  const followId = <S>(id: PulseSystemId, rule: Rule<S>) => {
    const ref = lookUp(system, id);
    if (ref !== undefined) followed.push(follow(ref, rule, log));
  };
  followId('replan', replanRule);
  followId('log', eventLogRule);
  followId('inbox', inboxRule);
  followId('gate', gateRule);
  followId('focus', focusRule);
  followId('watcher', watcherRule);
  followId('steer', steerRule);
  followId('notify', notifyRule);

  const pollers = new Map<string, { ref: AnyActorRef; unfollow: Unfollow }>();
  const followPollers = (snapshot: SnapshotFrom<typeof sourcesMachine>) => {
    const running = new Map<string, AnyActorRef>();
    for (const source of snapshot.context.sources) {
      const ref = lookUp(system, pollerId(source.name));
      if (ref !== undefined) running.set(source.name, ref);
    }
    for (const [name, followedPoller] of pollers) {
      if (running.get(name) === followedPoller.ref) continue;
      followedPoller.unfollow();
      pollers.delete(name);
    }
    for (const [name, ref] of running) {
      if (!pollers.has(name)) pollers.set(name, { ref, unfollow: follow(ref, pollerRule, log) });
    }
  };
  followId<SnapshotFrom<typeof sourcesMachine>>('sources', (previous, next, logger) => {
    sourcesRule(previous, next, logger);
    if (next.context.loads !== previous?.context.loads) followPollers(next);
  });

  return () => {
    for (const unfollow of followed) unfollow();
    for (const { unfollow } of pollers.values()) unfollow();
    pollers.clear();
  };
};
