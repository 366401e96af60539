import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { askToServe } from '../../src/daemon/project-requests.js';

/*
 * `askToServe` on a real loopback port held by a fake daemon: it lists projects as pulse does,
 * then answers the request to add one with whatever body the test gives, hostile ones included.
 */

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))));
});

/** A program on an ephemeral loopback port that lists projects as pulse does and answers an add with `added`. */
const fakeDaemon = async (added: string): Promise<number> => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'GET') res.writeHead(200).end(JSON.stringify({ name: 'pulse-agent', projects: [] }));
      else res.writeHead(201).end(added);
    });
  });
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return (server.address() as AddressInfo).port;
};

const ask = (port: number) =>
  askToServe({ host: '127.0.0.1', port, root: '/tmp/p', logLevel: 'info', token: undefined });

describe('asking a running daemon to serve a project too', () => {
  it('takes a project the daemon says it added, as it said it', async () => {
    const project = { id: 'p1', root: '/tmp/p', url: 'http://127.0.0.1:1/p/p1/mcp', summary: ['watching'] };
    expect(await ask(await fakeDaemon(JSON.stringify(project)))).toEqual(project);
  });

  it.each([
    ['a url and nothing else', { url: 'http://127.0.0.1:1/p/x/mcp' }, 'id: '],
    ['a summary that is no list', { id: 'p', root: '/r', url: 'u', summary: 'rm -rf ~' }, 'summary: '],
    ['a list instead of an object', ['p'], 'body: '],
  ])('refuses a 201 whose body is %s, saying what is wrong and how to fix it', async (_, body, why) => {
    const port = await fakeDaemon(JSON.stringify(body));
    const refusal = ask(port);
    await expect(refusal).rejects.toThrow(`said it added the project, but its answer is no project (${why}`);
    await expect(refusal).rejects.toThrow(`stop what holds port ${port} and start again`);
  });

  it('takes a 201 that is not JSON as some other program, and asks it nothing more', async () => {
    expect(await ask(await fakeDaemon('<html>hello</html>'))).toBeNull();
  });
});
