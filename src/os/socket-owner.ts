import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';

/** One end of a TCP connection as Node reports it (`socket.remoteAddress`, `remotePort`, …). */
export interface Endpoint {
  address: string;
  port: number;
}

/** What the kernel's socket tables say of one socket: its ends, its state, its owner's uid and inode. */
interface SocketRow {
  local: Endpoint;
  remote: Endpoint;
  listening: boolean;
  uid: number;
  /** 0 for a socket no process holds any more (TIME_WAIT, orphaned), whose uid the kernel prints as 0. */
  inode: number;
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

const TCP4 = '/proc/net/tcp';
const TCP6 = '/proc/net/tcp6';

const rowOf = (line: string): SocketRow | null => {
  const fields = line.trim().split(/\s+/);
  if (fields.length < 10 || fields[0] === 'sl') return null;
  return {
    local: endpointOf(fields[1]!),
    remote: endpointOf(fields[2]!),
    listening: fields[3] === TCP_LISTEN,
    uid: Number(fields[7]),
    inode: Number(fields[9]),
  };
};

/** A chunk the kernel fills from its socket hash: larger than a page, so a few reads cover a busy table. */
const CHUNK_BYTES = 64 * 1024;

/**
 * The lines of one table as the kernel writes them, read chunk by chunk so a caller that finds its
 * row stops there: the kernel walks its whole socket hash (hundreds of thousands of buckets) to
 * reach the end, which costs milliseconds. Null where the table cannot be opened.
 */
const tableLines = (table: string): Iterable<string> | null => {
  let fd: number;
  try {
    fd = openSync(table, 'r');
  } catch {
    return null;
  }
  return (function* lines() {
    const buffer = Buffer.alloc(CHUNK_BYTES);
    let rest = '';
    try {
      for (;;) {
        const read = readSync(fd, buffer, 0, CHUNK_BYTES, null);
        if (read === 0) break;
        const lines = (rest + buffer.toString('latin1', 0, read)).split('\n');
        rest = lines.pop() ?? '';
        yield* lines;
      }
      yield rest;
    } finally {
      closeSync(fd);
    }
  })();
};

/** How a port ends an address field of the tables (`0100007F:1F90`), for a match before parsing. */
const portField = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, '0')} `;

const same = (a: Endpoint, b: Endpoint) => a.port === b.port && a.address === canonicalAddress(b.address);

/**
 * The uid of the process that opened the other end of a loopback connection: its socket is the
 * one whose local end is our peer and whose remote end is us, and which a process still holds.
 * Null where the kernel does not say (the peer already closed), which callers must treat as "not
 * this user"; 'unsupported' where no table can be read. The table of our socket's family is read
 * first, the other only when the peer is not there (an IPv6 client of a v4-mapped address).
 */
export const peerUid = (us: Endpoint, peer: Endpoint): number | null | 'unsupported' => {
  const order = canonicalAddress(us.address).includes(':') ? [TCP6, TCP4] : [TCP4, TCP6];
  let readable = false;
  // Thousands of rows on a busy machine: only those naming both ports are parsed.
  const peerPort = portField(peer.port);
  const ourPort = portField(us.port);
  for (const table of order) {
    const lines = tableLines(table);
    if (lines === null) continue;
    readable = true;
    for (const line of lines) {
      if (!line.includes(peerPort) || !line.includes(ourPort)) continue;
      const row = rowOf(line);
      if (row !== null && row.inode !== 0 && same(row.local, peer) && same(row.remote, us)) return row.uid;
    }
  }
  return readable ? null : 'unsupported';
};

/**
 * The uids of the sockets listening on `port` at `address` or at a wildcard address, as the
 * kernel lists them; null where it does not list sockets (not Linux). Each table is read only up
 * to its first socket that does not listen: the kernel lists the listening ones first, and the
 * rest is every connection of the machine, which `pulse hook` would pay for on every tool call.
 */
export const listenerUids = (address: string, port: number): number[] | null => {
  const wanted = canonicalAddress(address);
  const wildcards = new Set(['0.0.0.0', '0:0:0:0:0:0:0:0']);
  const local = portField(port);
  const uids: number[] = [];
  let readable = false;
  for (const table of [TCP4, TCP6]) {
    const lines = tableLines(table);
    if (lines === null) continue;
    readable = true;
    for (const line of lines) {
      const row = rowOf(line);
      if (row === null) continue;
      if (!row.listening) break;
      if (!line.includes(local)) continue;
      if (row.local.port === port && (row.local.address === wanted || wildcards.has(row.local.address)))
        uids.push(row.uid);
    }
  }
  return readable ? uids : null;
};
