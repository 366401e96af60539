import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

// A stand-in for an HTTP hook endpoint (`{"type": "http", "url": …}` in Claude Code's settings):
// it records what Claude Code sends and answers as each test says, including not at all.

/** One hook call as it arrived: the path names the case, the body is the hook's input JSON. */
export interface HookCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** An answer: a status (200 by default) and a body (empty by default), or `hang` to never answer. */
export type HookReply = { status?: number; body?: string } | 'hang';

/** A running hook endpoint. */
export interface HookServer {
  url: string;
  calls: HookCall[];
  close(): Promise<void>;
}

/** A hook's JSON answer, as a reply. */
export const json = (value: unknown): HookReply => ({ body: JSON.stringify(value) });

/** Starts a hook endpoint on an ephemeral 127.0.0.1 port; `reply` decides each answer. */
export const startHookServer = async (reply: (call: HookCall) => HookReply): Promise<HookServer> => {
  const calls: HookCall[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      text += chunk;
    });
    request.on('end', () => {
      const call = {
        method: request.method ?? '',
        path: request.url ?? '/',
        headers: request.headers,
        body: JSON.parse(text || '{}') as Record<string, unknown>,
      };
      calls.push(call);
      const answer = reply(call);
      if (answer === 'hang') return;
      response.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
      response.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
