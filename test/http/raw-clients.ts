import { get, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { MCP_SESSION_HEADERS } from '../support/mcp-session.js';

/** A POST whose headers promise 100 bytes of body, of which it sends 5 and then nothing. */
export const HALF_SENT_BODY =
  'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"par';

/** A request whose headers never end. */
export const HALF_SENT_HEADERS = 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le';

/** A raw TCP client that sends `payload` once and then only listens. */
export interface StalledSocket {
  socket: Socket;
  /** Resolves when the socket closes, with everything the server sent (empty when refused unanswered). */
  closed: Promise<string>;
}

/** Opens a connection to the daemon at `url`, sends `payload` and stops there. */
export const stalledSocket = (url: string, payload: string): Promise<StalledSocket> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk;
    });
    // A refused connection is reset: that is an answer here, not a failure.
    socket.on('error', () => undefined);
    const closed = new Promise<string>((done) => socket.once('close', () => done(received)));
    socket.once('connect', () => {
      if (payload !== '') socket.write(payload);
      resolve({ socket, closed });
    });
    socket.once('close', () => reject(new Error('closed before connecting')));
  });

/** Resolves with `promise`'s value, or fails naming `what` after `ms`: a bound, not a timing assert. */
export const within = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });

/** The JSON-RPC answer in a response that is either JSON or one SSE `message` event. */
const answerOf = async (response: Response) => {
  const text = await response.text();
  const data = /^data: (.*)$/m.exec(text)?.[1] ?? text;
  return JSON.parse(data) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
};

/** One `tools/call` of `pulse_should_interrupt` on a session, by its id: the status and the answer. */
export const callOnSession = async (url: string, sessionId: string) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...MCP_SESSION_HEADERS, 'mcp-session-id': sessionId },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'pulse_should_interrupt', arguments: {} },
    }),
  });
  return { status: response.status, answer: await answerOf(response) };
};

/**
 * An SDK session client, resolved once its GET notification stream is open, that records the
 * log messages pushed on it.
 */
export const streamingClient = async (url: string) => {
  const logs: string[] = [];
  let opened = () => {};
  const streamOpen = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const client = new Client({ name: 'pulse-limits-test', version: '1.0.0' });
  client.setNotificationHandler('notifications/message', (n) => {
    logs.push(String(n.params.data));
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === 'GET' && response.ok) opened();
      return response;
    },
  });
  await client.connect(transport);
  await streamOpen;
  return { client, transport, logs };
};

/** What `/healthz` says of connections, sessions and push watches. */
export interface Health {
  sessions: number;
  push_watches: number;
  connections: { open: number; max: number; shed: number; refused: number } | null;
}

/** `GET /healthz` on a connection of its own, closed after (none kept alive), as a probe does. */
export const health = (url: string): Promise<Health> =>
  new Promise((resolve, reject) => {
    get(new URL('/healthz', url), { agent: false }, (response) => {
      let text = '';
      response.on('data', (chunk) => {
        text += chunk;
      });
      response.on('end', () => resolve(JSON.parse(text) as Health));
      response.on('error', reject);
    }).on('error', reject);
  });

/** A POST of JSON on a connection of its own (none kept alive, none reused): the status and the parsed body. */
export const postFresh = (
  url: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> =>
  new Promise((resolve, reject) => {
    const sent = JSON.stringify(body);
    const post = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(sent) },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
        response.on('error', reject);
      },
    );
    post.on('error', reject);
    post.end(sent);
  });
