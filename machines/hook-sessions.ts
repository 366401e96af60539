import { assign, setup } from 'xstate';

/** What pulse has already told one agent session through its hooks, so each thing is said once. */
export interface HookSessionMemory {
  /** The pending replan event a stop of this session was last held for. */
  stopHeldFor: string | null;
  /** The pending replan event this session was last told of as context (session start, a prompt). */
  toldPending: string | null;
  /** The delivery of external events this session was last told of. */
  toldDelivery: string | null;
}

export const FORGOTTEN_SESSION: HookSessionMemory = {
  stopHeldFor: null,
  toldPending: null,
  toldDelivery: null,
};

export interface HookSessionsContext {
  /** Keyed by `<agent>:<session id>`; insertion order is recency, oldest first. */
  sessions: Record<string, HookSessionMemory>;
  /** Sessions kept; past this the least recently heard is forgotten (and may hear a thing once more). */
  limit: number;
}

export type HookSessionsEvent = {
  type: 'hook.remember';
  session: string;
  /** Only the fields that changed; the rest are kept. */
  memory: Partial<HookSessionMemory>;
};

/** One session's memory, or a fresh one for a session never heard from. */
export const memoryOf = (context: HookSessionsContext, session: string): HookSessionMemory =>
  context.sessions[session] ?? FORGOTTEN_SESSION;

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
  context: ({ input }) => ({ sessions: {}, limit: input.limit ?? 1000 }),
  initial: 'listening',
  states: {
    listening: {
      description:
        'Remembers, per agent session, what its hooks were last told; the hook route reads it to say each thing once.',
      on: {
        'hook.remember': {
          actions: {
            type: 'remember',
            params: ({ event }) => ({ session: event.session, memory: event.memory }),
          },
        },
      },
    },
  },
});
