import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import type { PulseActor } from '../../machines/pulse.js';
import { type HttpFacts, systemStatus } from '../system/read-status.js';

export interface StatusStreamOptions {
  actor: PulseActor;
  /** The open MCP sessions, listed as connected agents, and the client the sampling thinker would ask. */
  facts?: () => HttpFacts;
  /** Calls `listener` whenever a session comes, goes or is used; returns how to stop. */
  onSessionsChange?: (listener: () => void) => () => void;
  /** Streams open at once; one more is refused with 503. */
  maxStreams?: number;
  /** Streams open at once for one origin (a browser page's, or the CLI's), so pages cannot take every place from `pulse guide --wait`. */
  maxPerOrigin?: number;
  /** A comment line this often keeps proxies and the browser from timing an idle stream out. */
  heartbeatMs?: number;
  /** Changes within this window go out as one frame. */
  coalesceMs?: number;
  /** What EventSource waits before it reconnects after the stream drops. */
  retryMs?: number;
  /** Waits out a coalescing window, or less when `signal` aborts; a test passes a clock it advances. */
  wait?: (ms: number, signal: AbortSignal) => Promise<unknown>;
}

/**
 * Whose stream it is: a browser page's origin (its `Origin`, or for a same-origin EventSource,
 * which sends none, the origin its Fetch Metadata says it shares), else the CLI's.
 */
const streamOrigin = (c: Context): string =>
  c.req.header('origin') ??
  (c.req.header('sec-fetch-site') === undefined ? 'the pulse CLI' : new URL(c.req.url).origin);

const realWait = (ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal });

/**
 * `GET /status/stream`: the status page's Server-Sent Events. The first frame is the whole
 * `systemStatus`, and so is every frame after it (`event: status`), sent when a burst of actor
 * changes has settled and only if what it shows changed. One system-wide inspection
 * subscription sees every actor, pollers spawned by a sources.json reload included, without
 * tracking them one by one, and the MCP sessions' changes wake it too; it and the timers end
 * with the stream.
 */
export const createStatusStream = ({
  actor,
  facts = () => ({}),
  onSessionsChange = () => () => undefined,
  maxStreams = 16,
  maxPerOrigin = Math.ceil(maxStreams / 2),
  heartbeatMs = 15_000,
  coalesceMs = 100,
  retryMs = 2_000,
  wait = realWait,
}: StatusStreamOptions) => {
  let open = 0;
  const openBy = new Map<string, number>();

  const serve = async (stream: SSEStreamingApi, origin: string) => {
    const closed = new AbortController();
    let wake = () => {};
    let changed = false;
    let beat = false;
    const end = () => {
      closed.abort();
      wake();
    };
    stream.onAbort(end);
    const subscription = actor.system.inspect((event) => {
      if (event.type !== '@xstate.snapshot') return;
      changed = true;
      wake();
    });
    const stopFollowingSessions = onSessionsChange(() => {
      changed = true;
      wake();
    });
    const heartbeat = setInterval(() => {
      beat = true;
      wake();
    }, heartbeatMs);
    try {
      let last = '';
      const sendIfChanged = async (first: boolean) => {
        const data = JSON.stringify(systemStatus(actor, facts()));
        if (data === last) return;
        last = data;
        await stream.writeSSE({ event: 'status', data, ...(first ? { retry: retryMs } : {}) });
      };
      await sendIfChanged(true);
      while (!closed.signal.aborted) {
        if (changed) {
          await wait(coalesceMs, closed.signal).catch(() => undefined);
          changed = false;
          // A stopping daemon ends the stream; the page says so and EventSource comes back.
          if (closed.signal.aborted || actor.getSnapshot().status !== 'active') break;
          await sendIfChanged(false);
        } else if (beat) {
          beat = false;
          await stream.write(': heartbeat\n\n');
        } else {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
      }
    } finally {
      subscription.unsubscribe();
      stopFollowingSessions();
      clearInterval(heartbeat);
      open--;
      const left = (openBy.get(origin) ?? 1) - 1;
      if (left === 0) openBy.delete(origin);
      else openBy.set(origin, left);
    }
  };

  return {
    /** Streams open now. */
    get open() {
      return open;
    },
    handle: function statusStream(c: Context) {
      const origin = streamOrigin(c);
      const full = open >= maxStreams;
      if (full || (openBy.get(origin) ?? 0) >= maxPerOrigin) {
        c.header('Retry-After', '10');
        const count = full ? `${maxStreams}` : `${maxPerOrigin} for ${origin}`;
        return c.json(
          {
            error: `Too many status streams are open (${count}): close a status page tab, or read GET /status for one snapshot.`,
          },
          503,
        );
      }
      open++;
      openBy.set(origin, (openBy.get(origin) ?? 0) + 1);
      c.header('X-Content-Type-Options', 'nosniff');
      return streamSSE(c, (stream) => serve(stream, origin));
    },
  };
};
