import { type IncomingHttpHeaders, request } from 'node:http';

/** An answer as a client sees it; a stream's body is left unread (only its status and headers count). */
export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One HTTP request with exactly these headers (fetch will not let a test set Host), answered
 * with status, headers and body; an event stream is closed as soon as its headers arrive.
 */
export const send = (
  url: string,
  {
    method = 'GET',
    headers = {},
    body,
  }: { method?: string; headers?: Record<string, string>; body?: string } = {},
) =>
  new Promise<RawAnswer>((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const answer = { status: res.statusCode ?? 0, headers: res.headers, body: '' };
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.destroy();
        resolve(answer);
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        answer.body += chunk;
      });
      res.on('end', () => resolve(answer));
    });
    req.on('error', reject);
    req.end(body);
  });

/** An MCP one-shot call's body and headers, for `send`. */
export const mcpCall = (method: string, params: unknown = {}) => ({
  method: 'POST',
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
});
