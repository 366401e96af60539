import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type InspectorRelay, startInspectorRelay } from '../../src/inspect/relay.js';
import { REPLAY_COUNT } from '../../src/inspect/replay-buffer.js';
import { waitUntil } from '../support/daemon.js';

const relays: InspectorRelay[] = [];
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await Promise.all(relays.splice(0).map((relay) => relay.close()));
});

const start = async (port = 0) => {
  const relay = await startInspectorRelay({ port });
  relays.push(relay);
  return relay;
};

/** A client of the relay and every message it received. */
const connect = async (url: string, headers: Record<string, string> = {}) => {
  const socket = new WebSocket(url, { headers });
  sockets.push(socket);
  const received: string[] = [];
  socket.on('message', (data) => received.push(data.toString()));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return { socket, received };
};

const registration = (sessionId: string, name: string) =>
  JSON.stringify({ name, sessionId, snapshot: { status: 'active' }, type: '@xstate.actor' });
const snapshot = (sessionId: string, status: string) =>
  JSON.stringify({ sessionId, snapshot: { status }, type: '@xstate.snapshot' });

describe('the inspector relay', () => {
  it('relays each message from one client to every other, not back to its sender', async () => {
    const relay = await start();
    const sender = await connect(relay.wsUrl);
    const viewers = [await connect(relay.wsUrl), await connect(relay.wsUrl)];
    sender.socket.send('{"type":"@xstate.event"}');
    await waitUntil(() => viewers.every((v) => v.received.length === 1));
    expect(viewers.map((v) => v.received)).toEqual([
      ['{"type":"@xstate.event"}'],
      ['{"type":"@xstate.event"}'],
    ]);
    expect(sender.received).toEqual([]);
  });

  it("replays to a new client the last 200 messages, after every running actor's registration", async () => {
    const relay = await start();
    const sender = await connect(relay.wsUrl);
    sender.socket.send(registration('x:1', 'gate'));
    sender.socket.send(registration('x:2', '0.log.scanning'));
    sender.socket.send(snapshot('x:2', 'done'));
    for (let i = 0; i < REPLAY_COUNT + 50; i++) sender.socket.send(`{"n":${i}}`);
    const watcher = await connect(relay.wsUrl);
    await waitUntil(() => watcher.received.length >= 1, { describe: () => 'the replay' });
    const late = await connect(relay.wsUrl);
    await waitUntil(() => late.received.length === REPLAY_COUNT + 1, {
      describe: () => `${REPLAY_COUNT + 1} messages (got ${late.received.length})`,
    });
    // The finished promise actor is forgotten; the gate, registered long ago, is not.
    expect(late.received[0]).toBe(registration('x:1', 'gate'));
    expect(late.received[1]).toBe('{"n":50}');
    expect(late.received.at(-1)).toBe(`{"n":${REPLAY_COUNT + 49}}`);
  });

  it('refuses a WebSocket whose Host or Origin is not a loopback name', async () => {
    const relay = await start();
    await expect(connect(relay.wsUrl, { host: 'evil.example' })).rejects.toThrow(/403/);
    await expect(connect(relay.wsUrl, { origin: 'https://evil.example' })).rejects.toThrow(/403/);
    await expect(connect(relay.wsUrl, { origin: `http://localhost:${relay.port}` })).resolves.toBeDefined();
  });

  it('answers 404 off its page', async () => {
    const relay = await start();
    expect((await fetch(`${relay.url}/elsewhere`)).status).toBe(404);
    expect((await fetch(relay.url)).headers.get('content-type')).toMatch(/text\/html/);
  });

  it('names a taken port and how to pick another', async () => {
    const taken = await start();
    await expect(start(taken.port)).rejects.toThrow(
      `--inspect-port ${taken.port} is in use; pick another or 0.`,
    );
  });

  it('closes its clients and frees its port on close', async () => {
    const relay = await start();
    const client = await connect(relay.wsUrl);
    const closed = new Promise((resolve) => client.socket.once('close', resolve));
    await relay.close();
    relays.splice(relays.indexOf(relay), 1);
    await closed;
    const again = await start(relay.port);
    expect(again.port).toBe(relay.port);
  });
});
