import { assign, setup } from 'xstate';
import {
  FORGOTTEN_SESSION,
  type HookSessionMemory,
  type HookSessionsContext,
  type HookSessionsEvent,
} from './hook-sessions-context.js';
import { endedCall, startedCall } from './hook-sessions-decisions.js';

/**
 * What pulse's hooks have said to each agent session: the stop held for a pending event (held
 * once per event, so a stop hook can never loop), and the replan and delivery already told as
 * context. Memory only: after a restart a session may hear a thing once more.
 */
export const hookSessionsMachine = setup({
  types: {
    context: {} as HookSessionsContext,
    events: {} as HookSessionsEvent,
    input: {} as { limit?: number },
  },
  actions: {
    /** Merges what this session was just told, makes it the most recent, and forgets the oldest past the limit. */
    remember: assign(
      ({ context }, { session, memory }: { session: string; memory: Partial<HookSessionMemory> }) => {
        const { [session]: previous, ...others } = context.sessions;
        const sessions = { ...others, [session]: { ...(previous ?? FORGOTTEN_SESSION), ...memory } };
        const names = Object.keys(sessions);
        for (const name of names.slice(0, Math.max(0, names.length - context.limit))) delete sessions[name];
        return { sessions };
      },
    ),
  },
}).createMachine({
  id: 'hookSessions',
  context: ({ input }) => ({ sessions: {}, limit: input.limit ?? 1000, pulseCalls: [] }),
  initial: 'listening',
  states: {
    listening: {
      description:
        "Remembers, per agent session, what its hooks were last told (the hook route reads it to say each thing once), and which of pulse's own tool calls each has announced and not yet ended (a 2026-07-28 request without a handle is known by it).",
      on: {
        'hook.remember': {
          actions: {
            type: 'remember',
            params: ({ event }) => ({ session: event.session, memory: event.memory }),
          },
        },
        'hook.pulseCallStarted': {
          actions: assign(({ context, event }) => ({
            pulseCalls: startedCall(context.pulseCalls, event.call),
          })),
        },
        'hook.pulseCallEnded': {
          actions: assign(({ context, event }) => ({
            pulseCalls: endedCall(context.pulseCalls, event.party, event.tool),
          })),
        },
      },
    },
  },
});
