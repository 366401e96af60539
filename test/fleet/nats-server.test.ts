import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NatsServer, natsOrSkip, startNats } from './nats-server.js';

describe.runIf(natsOrSkip())('the test nats-server', () => {
  let nats: NatsServer;
  beforeAll(async () => {
    nats = await startNats();
  });
  afterAll(() => nats?.close());

  it('keeps a JetStream stream across kill -9 and a restart on the same port and store', async () => {
    const nc = await connect({ servers: nats.url, reconnect: false });
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'KEEP', subjects: ['keep.>'] });
    await jsm.jetstream().publish('keep.one', 'x');
    await nc.close();
    await nats.kill9();
    await expect(connect({ servers: nats.url, reconnect: false, timeout: 300 })).rejects.toThrow();
    await nats.restart();
    const again = await connect({ servers: nats.url, reconnect: false });
    const info = await (await jetstreamManager(again)).streams.info('KEEP');
    expect(info.state.messages).toBe(1);
    await again.close();
  });
});
