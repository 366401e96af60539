import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';

/** One end of a TCP connection as Node reports it (`socket.remoteAddress`, `remotePort`, …). */
export interface Endpoint {
  address: string;
  port: number;
}

/** What the kernel's socket tables say of one socket: its ends, its state and its owner's uid. */
interface SocketRow {
  local: Endpoint;
  remote: Endpoint;
  listening: boolean;
  uid: number;
}

const LITTLE_ENDIAN = endianness() === 'LE';
const TCP_LISTEN = '0A';

/** `/proc/net/tcp*` writes each 32-bit word of an address in the host's byte order. */
const addressBytes = (hex: string): number[] => {
  const bytes: number[] = [];
  for (let word = 0; word < hex.length; word += 8) {
    const group = [0, 2, 4, 6].map((at) => Number.parseInt(hex.slice(word + at, word + at + 2), 16));
    bytes.push(...(LITTLE_ENDIAN ? group.reverse() : group));
  }
  return bytes;
};

const V4_MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/** An address in one canonical text: dotted IPv4 (also for `::ffff:a.b.c.d`), else eight full IPv6 groups. */
const canonical = (bytes: number[]): string => {
  if (bytes.length === 4) return bytes.join('.');
  if (V4_MAPPED_PREFIX.every((b, i) => bytes[i] === b)) return bytes.slice(12).join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return groups.join(':');
};

/** Node's text of an address (`127.0.0.1`, `::1`, `::ffff:127.0.0.1`) in `canonical`'s form. */
export const canonicalAddress = (address: string): string => {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!bare.includes(':')) return bare;
  const v4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(bare)?.[1];
  const head = v4Tail === undefined ? bare : bare.slice(0, -v4Tail.length);
  const tailGroups = v4Tail === undefined ? [] : ['0', '0'];
  const [left = '', right] = head.split('::') as [string, string | undefined];
  const split = (text: string) => text.split(':').filter((group) => group !== '');
  const leftGroups = split(left);
  const rightGroups = right === undefined ? [] : split(right);
  const missing = 8 - leftGroups.length - rightGroups.length - tailGroups.length;
  const groups = [...leftGroups, ...Array(Math.max(missing, 0)).fill('0'), ...rightGroups, ...tailGroups];
  const bytes = groups.flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [(value >> 8) & 0xff, value & 0xff];
  });
  if (v4Tail !== undefined) bytes.splice(12, 4, ...v4Tail.split('.').map(Number));
  return canonical(bytes);
};

const endpointOf = (field: string): Endpoint => {
  const [hex = '', port = '0'] = field.split(':');
  return { address: canonical(addressBytes(hex)), port: Number.parseInt(port, 16) };
};

const rowOf = (line: string): SocketRow | null => {
  const fields = line.trim().split(/\s+/);
  if (fields.length < 8 || fields[0] === 'sl') return null;
  return {
    local: endpointOf(fields[1]!),
    remote: endpointOf(fields[2]!),
    listening: fields[3] === TCP_LISTEN,
    uid: Number(fields[7]),
  };
};

const CHUNK = 4096;

/**
 * The rows of one table, or null when it cannot be read. With `listeningOnly` it stops at the
 * first row that does not listen: the kernel lists listening sockets first, and reading on would
 * walk every connection of the machine (milliseconds that `pulse hook` pays on every tool call).
 */
const readTable = (table: string, listeningOnly: boolean): SocketRow[] | null => {
  let fd: number;
  try {
    fd = openSync(table, 'r');
  } catch {
    return null;
  }
  try {
    const rows: SocketRow[] = [];
    const buffer = Buffer.allocUnsafe(CHUNK);
    let rest = '';
    for (;;) {
      const read = readSync(fd, buffer, 0, CHUNK, null);
      const lines = (rest + buffer.toString('latin1', 0, read)).split('\n');
      rest = read === 0 ? '' : (lines.pop() ?? '');
      for (const line of lines) {
        const row = rowOf(line);
        if (row === null) continue;
        if (listeningOnly && !row.listening) return rows;
        rows.push(row);
      }
      if (read === 0) return rows;
    }
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
};

/** The TCP sockets of this network namespace (the listening ones only, if asked), or null where the kernel has no such tables (not Linux). */
const readSockets = (listeningOnly = false): SocketRow[] | null => {
  const tables = ['/proc/net/tcp', '/proc/net/tcp6'].map((table) => readTable(table, listeningOnly));
  if (tables.every((rows) => rows === null)) return null;
  return tables.flatMap((rows) => rows ?? []);
};

const same = (a: Endpoint, b: Endpoint) => a.port === b.port && a.address === canonicalAddress(b.address);

/**
 * The uid of the process that opened the other end of a loopback connection: its socket is the
 * one whose local end is our peer and whose remote end is us. Null where the kernel does not say
 * (no /proc, or the peer already closed), which callers must treat as "not this user".
 */
export const peerUid = (us: Endpoint, peer: Endpoint): number | null | 'unsupported' => {
  const rows = readSockets();
  if (rows === null) return 'unsupported';
  return rows.find((row) => same(row.local, peer) && same(row.remote, us))?.uid ?? null;
};

/**
 * The uids of the sockets listening on `port` at `address` or at a wildcard address, as the
 * kernel lists them; null where it does not list sockets (not Linux).
 */
export const listenerUids = (address: string, port: number): number[] | null => {
  const rows = readSockets(true);
  if (rows === null) return null;
  const wanted = canonicalAddress(address);
  const wildcards = new Set(['0.0.0.0', '0:0:0:0:0:0:0:0']);
  return rows
    .filter(
      (row) =>
        row.listening &&
        row.local.port === port &&
        (row.local.address === wanted || wildcards.has(row.local.address)),
    )
    .map((row) => row.uid);
};
