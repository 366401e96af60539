import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { Hono } from 'hono';
import { WebSocket, WebSocketServer } from 'ws';
import { isLoopbackHost } from '../http/auth.js';
import { hostGuard } from '../http/host-guard.js';
import { bridgePage } from './bridge-page.js';
import { createReplayBuffer } from './replay-buffer.js';

/** A client this far behind (a stuck browser tab) is dropped rather than buffered without end. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/** The running relay: its page and WebSocket URLs, and how to close it. */
export interface InspectorRelay {
  port: number;
  /** The bridge page (embeds stately.ai/inspect). */
  url: string;
  /** Where inspectors send and receivers listen. */
  wsUrl: string;
  /** Resolves once the first client (the daemon's own inspector, started with the relay) answered a ping: its socket is open. */
  firstClient: Promise<void>;
  close(): Promise<void>;
}

/** The daemon's loopback Host rule, applied to the relay's page and its WebSocket. */
const guard = new Hono().use(hostGuard()).all('*', (c) => c.body(null, 204));

/** Why an Origin is not a page of this relay (a loopback name on its own port), or null when it is. */
const foreignOrigin = (origin: string | undefined, port: string): string | null => {
  if (origin === undefined) return null;
  try {
    const url = new URL(origin);
    if (isLoopbackHost(url.hostname) && url.port === port) return null;
  } catch {}
  return `Origin "${origin}" is not this relay's page: only its own page may connect.`;
};

const refusal = async (req: IncomingMessage): Promise<string | null> => {
  const headers: Record<string, string> = {};
  if (req.headers.host !== undefined) headers.host = req.headers.host;
  const port = /:(\d+)$/.exec(req.headers.host ?? '')?.[1] ?? '';
  const foreign = foreignOrigin(req.headers.origin, port);
  if (foreign !== null) return foreign;
  const answer = await guard.request('/', { headers });
  return answer.status === 204 ? null : ((await answer.json()) as { error: string }).error;
};

const rejectUpgrade = (socket: Duplex, reason: string) => {
  socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${reason}`);
};

/**
 * The local relay between the daemon's inspector and the viewers, speaking the protocol of
 * `@statelyai/inspect/server`: `GET /` serves the bridge page; each WebSocket message goes to
 * every other client, and a new client first gets the last 200 (and every running actor's
 * registration). Bound to 127.0.0.1 only; the Host must be a loopback name and an Origin its own.
 */
export const startInspectorRelay = ({ port = 5678 }: { port?: number } = {}): Promise<InspectorRelay> => {
  // Not `createInspectorServer` (0.7.2): it listens on all interfaces, a port in use crashes it (no 'error' listener), and it has no Host check.
  const buffer = createReplayBuffer();
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024 * 1024 });
  // A pong comes only from an open socket, which the server's own 'connection' does not promise.
  const firstClient = new Promise<void>((resolve) =>
    wss.once('connection', (client) => {
      client.once('pong', () => resolve());
      client.ping();
    }),
  );

  wss.on('connection', (client) => {
    for (const message of buffer.replay()) client.send(message);
    client.on('error', () => client.terminate());
    client.on('message', (data) => {
      const message = data.toString();
      buffer.add(message);
      for (const other of wss.clients) {
        if (other === client || other.readyState !== WebSocket.OPEN) continue;
        if (other.bufferedAmount > MAX_BUFFERED_BYTES) other.terminate();
        else other.send(message);
      }
    });
  });

  const server = createServer((req, res) => {
    refusal(req).then(
      (reason) => {
        if (reason !== null) {
          res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ error: reason }));
        } else if (req.method === 'GET' && (req.url === '/' || req.url?.startsWith('/?'))) {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(bridgePage());
        } else {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the inspector page is at /.');
        }
      },
      () => res.writeHead(500).end(),
    );
  });
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    refusal(req).then(
      (reason) => {
        if (reason !== null) rejectUpgrade(socket, reason);
        else wss.handleUpgrade(req, socket, head, (client) => wss.emit('connection', client, req));
      },
      () => socket.destroy(),
    );
  });

  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      wss.close();
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`--inspect-port ${port} is in use; pick another or 0.`, { cause: error })
          : error,
      );
    };
    server.once('error', failed);
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as AddressInfo).port;
      server.off('error', failed);
      // Once listening, a failed accept must not take the daemon down with it.
      server.on('error', () => {});
      resolve({
        port: bound,
        url: `http://127.0.0.1:${bound}`,
        wsUrl: `ws://127.0.0.1:${bound}`,
        firstClient,
        close: () =>
          new Promise<void>((done) => {
            for (const client of wss.clients) client.terminate();
            wss.close();
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
};
