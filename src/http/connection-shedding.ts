import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server, Socket } from 'node:net';

/** What the cap knows of one open connection when a newcomer needs its place. */
export interface HeldConnection {
  /** When it was accepted, on the cap's own counter: smaller is older. */
  accepted: number;
  /** A request on it has arrived whole (headers and body) at least once. */
  served: boolean;
  /** A whole request is being answered on it now: a call, a hook, an open stream. */
  answering: boolean;
  /** When a request on it last began or ended, on the same counter. */
  lastActive: number;
}

/**
 * The connection to close so a newcomer can have its place: the oldest that never sent a whole
 * request, else the least recently active one that is answering nothing (an idle keep-alive, or
 * a second request stalled half-way), else null (every one is answering, so the newcomer is refused).
 */
export const connectionToShed = <C extends HeldConnection>(held: Iterable<C>): C | null => {
  let stalled: C | null = null;
  let idle: C | null = null;
  for (const c of held) {
    if (c.answering) continue;
    if (!c.served && (stalled === null || c.accepted < stalled.accepted)) stalled = c;
    if (idle === null || c.lastActive < idle.lastActive) idle = c;
  }
  return stalled ?? idle;
};

/** Connections now and since start, for `/healthz`. */
export interface ConnectionCounts {
  open: number;
  max: number;
  /** Closed to make room for a newcomer at `max`, oldest never-served first. */
  shed: number;
  /** Closed unanswered: at `max` with every connection answering, or not accepted (EMFILE). */
  refused: number;
}

interface Tracked {
  socket: Socket;
  accepted: number;
  served: boolean;
  lastActive: number;
  /** The request last begun on it, until its response closes. */
  request: IncomingMessage | null;
}

// `complete` turns true when the body has arrived, with no event to say so: read it when choosing.
function* held(open: Iterable<Tracked>) {
  for (const { socket, accepted, served, lastActive, request } of open) {
    const answering = request?.complete === true;
    yield { socket, accepted, served: served || answering, answering, lastActive };
  }
}

/**
 * Holds a listening server to `max` connections: at the cap, a newcomer takes the place of the
 * connection `connectionToShed` picks, and is refused only when none can go. Returns the counts.
 */
export const capConnections = (server: Server, max: number): (() => ConnectionCounts) => {
  const open = new Map<Socket, Tracked>();
  let clock = 0;
  let shed = 0;
  let refused = 0;
  server.on('connection', (socket: Socket) => {
    if (open.size >= max) {
      const victim = connectionToShed(held(open.values()));
      if (victim === null) {
        refused++;
        socket.destroy();
        return;
      }
      shed++;
      // Forgotten at once, so the next newcomer of the same accept batch counts right.
      open.delete(victim.socket);
      victim.socket.destroy();
    }
    const tracked: Tracked = { socket, accepted: ++clock, served: false, lastActive: clock, request: null };
    open.set(socket, tracked);
    socket.once('close', () => open.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const tracked = open.get(request.socket);
    if (tracked === undefined) return;
    tracked.request = request;
    tracked.lastActive = ++clock;
    response.once('close', () => {
      tracked.served ||= request.complete;
      if (tracked.request === request) tracked.request = null;
      tracked.lastActive = ++clock;
    });
  });
  // At the process's own file limit accept() fails and libuv closes the pending connection; without
  // a listener Node would throw that 'error' and end the daemon.
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (error.syscall === 'accept') refused++;
  });
  return () => ({ open: open.size, max, shed, refused });
};
