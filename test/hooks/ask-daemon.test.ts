import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { askDaemon, HookRefusedError } from '../../src/hooks/ask-daemon.js';

/*
 * `pulse hook`'s request to the daemon, against a server that answers as a daemon refusing it
 * would: a 403 is a refusal with the daemon's sentence, never "not reachable".
 */

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

const answering = async (status: number, body: string) => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end(body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/p/x/mcp`;
};

const hook = { agent: 'claude', event: 'PreToolUse', project: '/tmp/p', body: '{}' };

describe('askDaemon', () => {
  it("rejects a 403 as the daemon's refusal, with its sentence", async () => {
    const sentence = 'This pulse daemon serves alice (uid 1000); this connection comes from uid 1001.';
    const url = await answering(403, JSON.stringify({ error: sentence }));
    const refused = askDaemon(url, hook);
    await expect(refused).rejects.toBeInstanceOf(HookRefusedError);
    await expect(refused).rejects.toThrow(`the daemon at ${url} refused the hook: ${sentence}`);
  });

  it('rejects another failure as an error of its own, not a refusal', async () => {
    const url = await answering(500, '{"error":"Internal server error."}');
    const failed = askDaemon(url, hook);
    await expect(failed).rejects.not.toBeInstanceOf(HookRefusedError);
    await expect(failed).rejects.toThrow('answered 500');
  });
});
