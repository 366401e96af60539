import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A scripted OpenAI-compatible Chat Completions server on loopback: the "model" the thinking
 * engine asks. It judges by a rule the tests can read (a title with URGENT is 0.9, any other
 * 0.1), and each request can be scripted to come back another way: bare JSON (structured
 * output), JSON inside prose (a server that ignores response_format), a stream (SSE) despite
 * `stream: false`, garbage, an HTTP error, or no answer at all until released.
 */

/** How the server answers one request. */
export type Reply =
  | { kind: 'json' }
  | { kind: 'prose' }
  | { kind: 'stream' }
  | { kind: 'garbage' }
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** The content as given, as the model's message. */
  | { kind: 'content'; text: string }
  /** Holds the request open until `release()` (or the client goes away). */
  | { kind: 'hang' };

/** One event as the server read it out of the user message. */
export interface SeenEvent {
  id: string;
  source: string;
  title: string;
  starts_at: string | null;
  detail?: string;
}

/** One request as received. */
export interface ModelRequest {
  headers: IncomingMessage['headers'];
  body: {
    model: string;
    messages: Array<{ role: string; content: string }>;
    response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema: unknown } };
    stream?: boolean;
    temperature?: number;
  };
  /** The events of the user message's JSON array. */
  events: SeenEvent[];
  /** When the request came in (ms since the epoch). */
  at: number;
}

/** The judgement the scripted model makes of one event. */
export const judgeTitle = (event: SeenEvent) =>
  /URGENT/.test(event.title)
    ? { id: event.id, urgency: 0.9, why: `urgent: ${event.title.slice(0, 40)}` }
    : { id: event.id, urgency: 0.1, why: 'routine, can wait' };

/** The JSON array that closes the user message (what `eventsMessage` sends). */
export const eventsOf = (user: string): SeenEvent[] => JSON.parse(user.slice(user.indexOf('\n[') + 1));

const completion = (content: string) =>
  JSON.stringify({
    id: 'chatcmpl-test',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  });

const sse = (content: string) => {
  const pieces = content.match(/.{1,16}/gs) ?? [];
  const chunk = (delta: Record<string, unknown>) =>
    `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta }] })}\n\n`;
  return [chunk({ role: 'assistant' }), ...pieces.map((p) => chunk({ content: p })), 'data: [DONE]\n\n'].join(
    '',
  );
};

/** Starts the server on an ephemeral loopback port; `script` answers each request in turn, then `fallback`. */
export const startModelServer = async ({
  fallback = { kind: 'json' } as Reply,
  judge = judgeTitle,
}: {
  fallback?: Reply;
  judge?: (event: SeenEvent) => Record<string, unknown>;
} = {}) => {
  const requests: ModelRequest[] = [];
  const script: Reply[] = [];
  const held: ServerResponse[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];

  const answer = (reply: Reply, request: ModelRequest, res: ServerResponse) => {
    const judged = JSON.stringify({ judgements: request.events.map(judge) });
    switch (reply.kind) {
      case 'json':
        return res.writeHead(200, { 'content-type': 'application/json' }).end(completion(judged));
      case 'prose':
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(
            completion(`Here is my assessment of the events.\n\n\`\`\`json\n${judged}\n\`\`\`\nLet me know.`),
          );
      case 'stream':
        return res.writeHead(200, { 'content-type': 'text/event-stream' }).end(sse(judged));
      case 'garbage':
        return res.writeHead(200, { 'content-type': 'application/json' }).end('<html>502 Bad Gateway</html>');
      case 'status':
        return res
          .writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
          .end(reply.body ?? JSON.stringify({ error: { message: `scripted ${reply.status}` } }));
      case 'content':
        return res.writeHead(200, { 'content-type': 'application/json' }).end(completion(reply.text));
      case 'hang':
        held.push(res);
    }
  };

  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => {
      text += chunk;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(text) as ModelRequest['body'];
      const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const request = { headers: req.headers, body, events: eventsOf(user), at: Date.now() };
      requests.push(request);
      for (const w of waiters.filter((w) => requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      answer(script.shift() ?? fallback, request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    /** The `base_url` to configure. */
    baseUrl: `http://127.0.0.1:${port}/v1`,
    server,
    requests,
    /** Answers the next requests these ways, in order. */
    script(...replies: Reply[]) {
      script.push(...replies);
    },
    /** Answers every request after the script this way. */
    setFallback(reply: Reply) {
      fallback = reply;
    },
    /** Resolves once `count` requests have come in. */
    received(count: number): Promise<void> {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    /** Answers the held requests as judged JSON. */
    release() {
      for (const res of held.splice(0)) {
        const request = requests[requests.length - 1]!;
        answer({ kind: 'json' }, request, res);
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held.splice(0)) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/** A running scripted model server. */
export type ModelServer = Awaited<ReturnType<typeof startModelServer>>;
