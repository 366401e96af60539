import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerTooLargeError, boundedFetch } from '../../src/sources/client/bounded-fetch.js';

const LIMIT = 1000;

/** Answers `size` bytes, with a Content-Length when the path says `/declared`, else chunked. */
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const body = 'x'.repeat(Number(url.searchParams.get('size')));
    if (url.pathname === '/declared') response.setHeader('content-length', body.length);
    // Two writes, so a chunked answer comes in more than one piece.
    response.write(body.slice(0, body.length / 2));
    response.end(body.slice(body.length / 2));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const post = (path: string, size: number) =>
  boundedFetch(LIMIT)(`${base}${path}?size=${size}`, { method: 'POST' });

describe('boundedFetch: an HTTP source answer is capped', () => {
  for (const path of ['/declared', '/chunked']) {
    it(`passes an answer at the limit whole (${path})`, async () => {
      const response = await post(path, LIMIT);
      expect((await response.text()).length).toBe(LIMIT);
    });

    it(`fails an answer over the limit, naming it (${path})`, async () => {
      const read = post(path, LIMIT + 1).then((response) => response.text());
      await expect(read).rejects.toThrow(AnswerTooLargeError);
      await expect(read).rejects.toThrow(/over the 1000-byte limit/);
    });
  }

  it('says how much a declared answer claimed, before reading any of it', async () => {
    await expect(post('/declared', 50_000)).rejects.toThrow(/50000 bytes declared/);
  });
});
