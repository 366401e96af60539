import { type AnyActorRef, assign, enqueueActions, fromPromise, raise, setup } from 'xstate';
import { ackRejection, type Caller, type Delivery, type Thought } from './delivery-rules.js';
import { errorMessage } from './error-message.js';
import type { InboxEvent } from './external.js';
import type { Ack, Claim, DrainOutput, GateContext, GateEvent, HoldReason } from './gate-context.js';
import { initialGateContext } from './gate-context.js';
import * as decisions from './gate-decisions.js';
import type { GateInput } from './gate-settings.js';
import { BACKLOG_EVENTS, definedSettings, INSERT_QUIET_MS, retryDelayMs } from './gate-settings.js';

/** What applying a decision needs of an action's arguments. */
interface DecisionArgs {
  enqueue: {
    assign(changes: Partial<GateContext>): void;
    sendTo(to: AnyActorRef, event: { type: string }): void;
  };
  system: { get(systemId: string): AnyActorRef | undefined };
}

/** Applies a decision: its settlement goes to the inbox, its reply to the asker, its changes to the context. */
const apply = ({ enqueue, system }: DecisionArgs, { changes, settle, reply }: decisions.GateDecision) => {
  if (settle !== null) enqueue.sendTo(system.get('inbox')!, settle);
  if (reply !== undefined) enqueue.sendTo(reply.to, reply.event);
  enqueue.assign(changes);
};

/**
 * The reflection gate: drains the inbox when a reflection is due and no gate holds it, asks the
 * thinker how urgent each event is, sets the urgent ones aside as a delivery for the first agent
 * that checks in (a lease from then on), and settles the rest with the inbox: consumed silently,
 * or put back (dead-lettered after `maxAttempts`) when nothing dealt with them. What each
 * decision does is in `gate-decisions.ts`; here, when it is taken.
 */
export const gateMachine = setup({
  types: {
    context: {} as GateContext,
    events: {} as GateEvent,
    input: {} as GateInput | undefined,
  },
  actors: {
    drainInbox: fromPromise<DrainOutput>(async () => {
      throw new Error('drainInbox not provided');
    }),
    think: fromPromise<Thought, { events: InboxEvent[]; now: number }>(async () => {
      throw new Error('think not provided');
    }),
  },
  actions: {
    configure: assign((_, { settings }: { settings: GateInput }) => definedSettings(settings)),
    noteReplan: assign((_, { pending }: { pending: boolean }) => ({ replanPending: pending })),
    /** Holds focus until `until` (null: none) as of `now`, and looks again when it ends, in timer-sized steps. */
    scheduleFocus: enqueueActions(({ enqueue }, { until, now }: { until: number | null; now: number }) => {
      const { focusUntil, checkAt } = decisions.focusStep(until, now);
      enqueue.cancel('focusEnd');
      enqueue.assign({ focusUntil });
      if (checkAt !== null)
        enqueue.raise({ type: 'gate.focusEnded', at: checkAt }, { id: 'focusEnd', delay: checkAt - now });
    }),
    reflectOnTimer: raise({ type: 'gate.reflect', reason: 'timer' }),
    /** Asks for a reflection that runs as soon as the gate is idle and open. */
    deferReflection: assign({ deferred: true }),
    hold: assign(({ context }, { reason }: { reason: HoldReason }) => decisions.held(context, reason)),
    startDrain: assign(({ context }) => ({ deferred: false, drains: context.drains + 1 })),
    takeBatch: assign(({ context }, drained: DrainOutput) => decisions.batchTaken(context, drained)),
    noteError: assign((_, { message }: { message: string }) => ({ lastError: message })),
    settleThought: enqueueActions((args, { thought }: { thought: Thought }) =>
      apply(args, decisions.thoughtSettled(args.context, thought)),
    ),
    settleFailedThought: enqueueActions((args, { failure }: { failure: decisions.FailureNote }) =>
      apply(args, decisions.thoughtFailed(args.context, failure)),
    ),
    withdrawOffer: enqueueActions((args, { delivery }: { delivery: Delivery }) =>
      apply(args, decisions.offerWithdrawn(args.context, delivery)),
    ),
    claimDelivery: assign(({ context }, { delivery, claim }: { delivery: Delivery; claim: Claim }) =>
      decisions.deliveryClaimed(context, delivery, claim),
    ),
    answerClaim: enqueueActions((args, claim: Claim) =>
      apply(args, decisions.claimAnswered(args.context, claim)),
    ),
    refuseAck: enqueueActions((args, ack: Ack & Caller) =>
      apply(args, decisions.ackRefused(args.context, ack)),
    ),
    settleAck: enqueueActions((args, { delivery, ack }: { delivery: Delivery; ack: Ack }) =>
      apply(args, decisions.ackSettled(args.context, delivery, ack)),
    ),
    expireLease: enqueueActions((args, { delivery }: { delivery: Delivery }) =>
      apply(args, decisions.leaseExpired(args.context, delivery)),
    ),
  },
  guards: {
    inFocus: ({ context }) => context.focusUntil !== null,
    replanPending: ({ context }) => context.replanPending,
    shouldReflect: ({ context }) => context.deferred && decisions.gateOpen(context),
    gateClosed: ({ context }) => !decisions.gateOpen(context),
    isUsable: ({ context }, { thought }: { thought: Thought | undefined }) =>
      decisions.isUsable(context, thought),
    isBacklog: ({ context }) => context.failedBatch >= BACKLOG_EVENTS,
    isInsert: ({ event }) => event.type === 'gate.reflect' && event.reason === 'inserted',
    // New events end a backoff, but not one the thinker's endpoint asked for with `Retry-After`.
    endsBackoff: ({ context, event }) =>
      event.type === 'gate.reflect' &&
      event.reason === 'inserted' &&
      context.lastFailure?.retryAfterMs == null,
    drainedNothing: (_, { events }: { events: InboxEvent[] }) => events.length === 0,
    hasDelivery: ({ context }) => context.delivery !== null,
    isCurrentDelivery: ({ context }, { ack }: { ack: Ack & Caller }) =>
      ackRejection(context.delivery, context.closed, ack.deliveryId, ack.outcomes, ack) === null,
  },
  delays: {
    reflectTimer: ({ context }) => context.reflectEveryMs,
    leaseTimeout: ({ context }) => context.leaseMs,
    cooldown: ({ context }) => context.cooldownMs,
    thinkTimeout: ({ context }) => context.thinkTimeoutMs,
    insertQuiet: INSERT_QUIET_MS,
    // A stream of inserts that never pauses still gets a reflection at the timer's pace.
    gatherMax: ({ context }) => context.reflectEveryMs,
    retryBackoff: ({ context }) =>
      retryDelayMs(context, context.endpointFailuresInARow, context.lastFailure?.retryAfterMs ?? null),
  },
}).createMachine({
  id: 'gate',
  context: ({ input }) => initialGateContext(input),
  on: {
    'gate.ack': { actions: { type: 'refuseAck', params: ({ event }) => event } },
    'gate.claim': { actions: { type: 'answerClaim', params: ({ event }) => event } },
    'gate.configure': { actions: { type: 'configure', params: ({ event }) => event } },
    'gate.focus': { actions: { type: 'scheduleFocus', params: ({ event }) => event } },
    'gate.focusEnded': {
      actions: {
        type: 'scheduleFocus',
        params: ({ context, event }) => ({ until: context.focusUntil, now: event.at }),
      },
    },
    'replan.status': { actions: { type: 'noteReplan', params: ({ event }) => event } },
  },
  initial: 'idle',
  states: {
    idle: {
      description:
        'No delivery is out. A reflection runs when asked (poller inserted, agent checked in) or on the timer, unless the user is in focus or a replan is pending; a held reflection runs as soon as those gates open.',
      always: { guard: 'shouldReflect', target: 'reflecting' },
      after: { reflectTimer: { target: 'idle', reenter: true, actions: 'reflectOnTimer' } },
      on: {
        'gate.reflect': [
          { guard: 'inFocus', actions: { type: 'hold', params: { reason: 'focus' } } },
          { guard: 'replanPending', actions: { type: 'hold', params: { reason: 'answering' } } },
          { guard: 'isInsert', target: 'gathering' },
          { target: 'reflecting' },
        ],
      },
    },
    gathering: {
      description:
        'New events were just inserted: waiting until no more arrive for a moment (a catch-up poll follows a capped one within seconds; sources started together insert together), so that they make one thought. A check-in or the timer does not wait.',
      after: { gatherMax: { target: 'idle', actions: 'deferReflection' } },
      on: { 'gate.reflect': { target: 'idle', actions: 'deferReflection' } },
      initial: 'quiet',
      states: {
        quiet: {
          description: 'Each insert starts the quiet period over; the gathering as a whole is bounded.',
          after: { insertQuiet: { target: '#gate.idle', actions: 'deferReflection' } },
          on: { 'gate.reflect': { guard: 'isInsert', target: 'quiet', reenter: true } },
        },
      },
    },
    reflecting: {
      description: 'Draining the whole inbox: from here on the drained events are out until judged.',
      entry: 'startDrain',
      on: { 'gate.reflect': { actions: 'deferReflection' } },
      invoke: {
        src: 'drainInbox',
        onDone: [
          { guard: { type: 'drainedNothing', params: ({ event }) => event.output }, target: 'idle' },
          { target: 'thinking', actions: { type: 'takeBatch', params: ({ event }) => event.output } },
        ],
        onError: {
          target: 'idle',
          actions: {
            type: 'noteError',
            params: ({ event }) => ({ message: `Could not drain the inbox: ${errorMessage(event.error)}` }),
          },
        },
      },
    },
    thinking: {
      description: 'The thinker judges the drained events, as facts, not instructions.',
      on: { 'gate.reflect': { actions: 'deferReflection' } },
      after: {
        thinkTimeout: {
          target: 'thoughtFailed',
          actions: {
            type: 'settleFailedThought',
            params: ({ context }) => ({ failure: decisions.thinkTimedOut(context) }),
          },
        },
      },
      invoke: {
        src: 'think',
        input: ({ context }) => ({ events: context.batch, now: context.reflectedAt ?? 0 }),
        onDone: [
          {
            guard: { type: 'isUsable', params: ({ event }) => ({ thought: event.output }) },
            target: 'judged',
            actions: { type: 'settleThought', params: ({ event }) => ({ thought: event.output }) },
          },
          {
            target: 'thoughtFailed',
            actions: {
              type: 'settleFailedThought',
              params: ({ context, event }) => ({ failure: decisions.answerUnusable(context, event.output) }),
            },
          },
        ],
        onError: {
          target: 'thoughtFailed',
          actions: {
            type: 'settleFailedThought',
            params: ({ context, event }) => ({
              failure: decisions.failureOf(event.error, context.reflectedAt ?? 0),
            }),
          },
        },
      },
    },
    thoughtFailed: {
      description:
        'Transient: the thinker threw, timed out or covered no event. Every drained event went back to the inbox front with one more attempt, or to the dead letters once out of attempts. The gate backs off, unless the batch was a backlog big enough to fill the inbox while it waited.',
      always: [{ guard: 'isBacklog', target: 'idle' }, { target: 'backingOff' }],
    },
    backingOff: {
      description:
        'A thought failed and its events are back in the inbox. The thinker is asked again at the next reflection; while its endpoint fails (unreachable, timed out, busy), twice as long after each such failure in a row, at most 5 minutes; and not before a Retry-After its endpoint sent (capped too); new events end the wait sooner (they make one thought with the failed ones) unless a Retry-After holds. The timer and check-ins do not ask it meanwhile.',
      after: { retryBackoff: { target: 'idle', actions: 'deferReflection' } },
      on: { 'gate.reflect': { guard: 'endsBackoff', target: 'gathering' } },
    },
    judged: {
      description: 'Transient: urgent events make a delivery; otherwise back to idle.',
      always: [{ guard: 'hasDelivery', target: 'offered' }, { target: 'idle' }],
    },
    offered: {
      description:
        'Urgent events are set aside for the agents: the first to check in takes them, and its lease starts then. The inbox is left untouched meanwhile. Should the user go into focus or a replan become pending first, the events go back to the inbox front untried, to be judged again once the gate opens.',
      always: {
        guard: 'gateClosed',
        target: 'idle',
        actions: { type: 'withdrawOffer', params: ({ context }) => ({ delivery: context.delivery! }) },
      },
      on: {
        'gate.reflect': { actions: { type: 'hold', params: { reason: 'awaiting' } } },
        'gate.claim': {
          target: 'awaiting',
          actions: [
            {
              type: 'claimDelivery',
              params: ({ context, event }) => ({ delivery: context.delivery!, claim: event }),
            },
            { type: 'answerClaim', params: ({ event }) => event },
          ],
        },
      },
    },
    awaiting: {
      description:
        'A delivery is out to one agent under a lease: reflections leave the inbox untouched, and other agents get nothing, until it is acknowledged or the lease expires.',
      on: {
        'gate.reflect': { actions: { type: 'hold', params: { reason: 'awaiting' } } },
        'gate.ack': [
          {
            guard: { type: 'isCurrentDelivery', params: ({ event }) => ({ ack: event }) },
            target: 'cooldown',
            actions: {
              type: 'settleAck',
              params: ({ context, event }) => ({ delivery: context.delivery!, ack: event }),
            },
          },
          { actions: { type: 'refuseAck', params: ({ event }) => event } },
        ],
      },
      after: {
        leaseTimeout: {
          target: 'idle',
          actions: { type: 'expireLease', params: ({ context }) => ({ delivery: context.delivery! }) },
        },
      },
    },
    cooldown: {
      description:
        'A delivery was just acknowledged: no reflection until the minimum time between deliveries has passed.',
      on: {
        'gate.reflect': [
          { guard: 'inFocus', actions: { type: 'hold', params: { reason: 'focus' } } },
          { guard: 'replanPending', actions: { type: 'hold', params: { reason: 'answering' } } },
          { actions: { type: 'hold', params: { reason: 'cooldown' } } },
        ],
      },
      after: { cooldown: 'idle' },
    },
  },
});
