import type { Context, MiddlewareHandler, Next } from 'hono';
import { refuse } from './refusal.js';

/** How long a request waits for a project still opening: as long as `pulse start --detach` gives a start. */
export const OPENING_WAIT_MS = 30_000;

/** `/projects` answers at once: `pulse start` probes it to tell a pulse from another program. */
const ANSWERS_AT_ONCE = /^\/projects(?:\/|$)/;
const PROJECT_PATH = /^\/p\/([^/]+)/;

/**
 * The projects being opened, and the middleware that holds requests for them until they are
 * served: one for `/p/<id>/…` waits for that project, and while none is served yet (the daemon is
 * starting) every other one but `/projects` waits for the first. Past `waitMs` it gets 503.
 */
export const createOpenings = ({
  servedCount,
  waitMs = OPENING_WAIT_MS,
}: {
  /** How many projects are served now. */
  servedCount: () => number;
  waitMs?: number;
}) => {
  const pending = new Map<string, { opened: Promise<void>; settle: () => void }>();

  /** What a request to `path` waits for, or undefined when it runs now. */
  const awaited = (path: string): Promise<void> | undefined => {
    if (pending.size === 0 || ANSWERS_AT_ONCE.test(path)) return undefined;
    const id = PROJECT_PATH.exec(path)?.[1];
    const own = id === undefined ? undefined : pending.get(id);
    if (own !== undefined) return own.opened;
    return servedCount() === 0 ? Promise.race([...pending.values()].map((p) => p.opened)) : undefined;
  };

  const waitThen = async (c: Context, next: Next, opened: Promise<void>) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      // Unref'd: a daemon that stops while requests wait must not stay up for them.
      timer = setTimeout(resolve, waitMs, 'late').unref();
    });
    const outcome = await Promise.race([opened, late]);
    clearTimeout(timer);
    if (outcome === 'late')
      return refuse(
        c,
        503,
        `pulse is still starting: the project was not served within ${waitMs / 1000} s. Try again in a moment; .pulse/pulse.log says what it is doing.`,
      );
    return next();
  };

  return {
    /**
     * Marks project `id` as opening; requests for it wait until it is `opened(id)` or the returned
     * function is called (it failed to open). Marking one already opening changes nothing.
     */
    opening(id: string): () => void {
      if (pending.has(id)) return () => undefined;
      let settle!: () => void;
      const opened = new Promise<void>((resolve) => {
        settle = resolve;
      });
      const entry = { opened, settle };
      pending.set(id, entry);
      return () => {
        if (pending.get(id) !== entry) return;
        pending.delete(id);
        settle();
      };
    },
    /** Project `id` is served: the requests that waited for it run. */
    opened(id: string): void {
      pending.get(id)?.settle();
      pending.delete(id);
    },
    /** Holds a request while what it is for is still opening; 503 past the wait. */
    untilOpened: function untilOpened(c, next) {
      const opened = awaited(c.req.path);
      // Nothing opening: on at once, without a wait's async step.
      if (opened === undefined) return next();
      return waitThen(c, next, opened);
    } satisfies MiddlewareHandler,
  };
};
