import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createDaemonApp } from '../../src/http/app.js';
import { createOpenings } from '../../src/http/opening.js';

/*
 * Requests held while a project opens, in process: what waits for what, what never waits, and
 * the 503 past the wait. A real daemon whose port opens before it serves:
 * test/daemon/served-at-start.test.ts.
 */

/** Lets the requests sent so far run as far as they can. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A bare app behind the openings: every route answers whether the project was served when it ran. */
const appWith = (waitMs?: number) => {
  const state = { served: 0 };
  const openings = createOpenings({ servedCount: () => state.served, waitMs });
  const app = new Hono();
  app.use('*', openings.untilOpened);
  app.all('*', (c) => c.json({ served: state.served }));
  return { app, openings, state };
};

describe('requests while a project opens', () => {
  it('holds a request for /p/<id>/… until that project is served', async () => {
    const { app, openings, state } = appWith();
    openings.opening('web-1');
    const answer = app.request('/p/web-1/mcp', { method: 'POST' });
    await settle();
    state.served = 1;
    openings.opened('web-1');
    expect(await (await answer).json()).toEqual({ served: 1 });
  });

  it('holds every route while none is served, but /projects, which answers at once', async () => {
    const { app, openings, state } = appWith();
    openings.opening('web-1');
    const held = ['/mcp', '/healthz', '/', '/hook/claude/PreToolUse', '/p/other-2/mcp'].map((path) =>
      app.request(path),
    );
    expect(await (await app.request('/projects')).json()).toEqual({ served: 0 });
    expect(await (await app.request('/projects/web-1', { method: 'DELETE' })).json()).toEqual({ served: 0 });
    await settle();
    state.served = 1;
    openings.opened('web-1');
    for (const answer of held) expect(await (await answer).json()).toEqual({ served: 1 });
  });

  it('holds no request for another project while one is served', async () => {
    const { app, openings, state } = appWith();
    state.served = 1;
    openings.opening('web-2');
    expect(await (await app.request('/mcp')).json()).toEqual({ served: 1 });
    expect(await (await app.request('/p/web-1/healthz')).json()).toEqual({ served: 1 });
  });

  it('lets the held requests run on when the project fails to open', async () => {
    const { app, openings } = appWith();
    const giveUp = openings.opening('web-1');
    const answer = app.request('/p/web-1/mcp');
    await settle();
    giveUp();
    expect(await (await answer).json()).toEqual({ served: 0 });
    // Nothing is opening any more: the next request is not held.
    expect(await (await app.request('/mcp')).json()).toEqual({ served: 0 });
  });

  it('answers 503 saying pulse is still starting past the wait, as JSON-RPC on /mcp', async () => {
    const { app, openings } = appWith(20);
    openings.opening('web-1');
    const page = await app.request('/healthz');
    expect(page.status).toBe(503);
    expect(await page.json()).toEqual({
      error:
        'pulse is still starting: the project was not served within 0.02 s. Try again in a moment; .pulse/pulse.log says what it is doing.',
    });
    const rpc = await app.request('/p/web-1/mcp', { method: 'POST' });
    expect(rpc.status).toBe(503);
    expect(await rpc.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32001, message: expect.stringContaining('pulse is still starting') },
    });
  });

  it('refuses a foreign Host, another account and a page of another origin at once, never holding them', async () => {
    const { app, opening } = createDaemonApp({ peerUid: (socket) => (socket as { uid: number }).uid });
    opening('web-1');
    const ask = (headers: Record<string, string>, uid = process.getuid?.() ?? 0) =>
      app.request(
        '/mcp',
        { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' },
        {
          incoming: { socket: { remoteAddress: '127.0.0.1', uid } },
        },
      );
    expect((await ask({ host: 'evil.example' })).status).toBe(403);
    expect((await ask({ host: 'localhost', origin: 'http://localhost:3000' })).status).toBe(403);
    expect((await ask({ host: 'localhost' }, 65534)).status).toBe(403);
  });
});
