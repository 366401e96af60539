import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { peerUid } from '../../src/os/socket-owner.js';

/*
 * The kernel's word on who opened the other end of a loopback connection, read from this
 * machine's own /proc/net/tcp: real sockets, no fixtures.
 */

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A server's end of a fresh loopback connection, and the client's socket. */
const connection = async (host: string): Promise<{ ours: Socket; theirs: Socket }> => {
  const server = createServer();
  closers.push(() => server.close());
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const theirs = connect((server.address() as AddressInfo).port, host);
  closers.push(() => theirs.destroy());
  const [ours] = await accepted;
  closers.push(() => ours.destroy());
  return { ours, theirs };
};

const ends = (socket: Socket) =>
  [
    { address: socket.localAddress!, port: socket.localPort! },
    { address: socket.remoteAddress!, port: socket.remotePort! },
  ] as const;

describe.skipIf(process.platform !== 'linux')('peerUid', () => {
  it('names the uid that opened the other end, over IPv4 and IPv6', async () => {
    for (const host of ['127.0.0.1', '::1']) {
      const { ours } = await connection(host);
      expect(peerUid(...ends(ours)), host).toBe(process.getuid!());
    }
  });

  it('names no one for a peer that already closed its socket, though the kernel lists it as uid 0', async () => {
    const { ours, theirs } = await connection('127.0.0.1');
    const [us, peer] = ends(ours);
    const ended = once(ours, 'end');
    theirs.destroy();
    await ended;
    // The closed end lingers as a FIN_WAIT2 or TIME_WAIT row with inode 0 (and uid 0): never its owner.
    expect(peerUid(us, peer)).toBeNull();
  });

  it('names no one for an address and port nobody is connected from', async () => {
    const { ours } = await connection('127.0.0.1');
    const [us] = ends(ours);
    expect(peerUid(us, { address: '127.0.0.1', port: 1 })).toBeNull();
  });
});
