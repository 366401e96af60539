/** How many recent messages a new viewer is sent first, as the library's relay does. */
export const REPLAY_COUNT = 200;
/** Registrations kept for late viewers (pollers restart; promise actors come and go). */
const ACTORS_KEPT = 500;

/** The session a registration names, or whose snapshot says it ended; parsed only when it may be one. */
const actorNews = (message: string): { registered?: string; ended?: string } => {
  const registers = message.includes('"type":"@xstate.actor"');
  if (!registers && !/"status":"(done|error|stopped)"/.test(message)) return {};
  try {
    const event = JSON.parse(message) as {
      type?: string;
      sessionId?: string;
      snapshot?: { status?: string };
    };
    if (typeof event.sessionId !== 'string') return {};
    if (event.type === '@xstate.actor') return { registered: event.sessionId };
    const status = event.snapshot?.status;
    if (event.type === '@xstate.snapshot' && status !== undefined && status !== 'active') {
      return { ended: event.sessionId };
    }
  } catch {}
  return {};
};

/**
 * What the relay sends a viewer that connects late: the last 200 messages, after the
 * registration of every actor still running (older than those 200, most of them), so that it
 * knows every actor, as the Stately page and `pulse inspect` need to name them.
 */
export const createReplayBuffer = () => {
  const recent: string[] = [];
  const actors = new Map<string, string>();
  return {
    add(message: string): void {
      recent.push(message);
      if (recent.length > REPLAY_COUNT) recent.shift();
      const { registered, ended } = actorNews(message);
      if (registered !== undefined) {
        actors.set(registered, message);
        if (actors.size > ACTORS_KEPT) actors.delete(actors.keys().next().value!);
      } else if (ended !== undefined) {
        actors.delete(ended);
      }
    },
    replay(): string[] {
      const inRecent = new Set(recent);
      return [...[...actors.values()].filter((message) => !inRecent.has(message)), ...recent];
    },
  };
};
