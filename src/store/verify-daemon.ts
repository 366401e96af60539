import { notMyProcess } from '../os/process-owner.js';
import { listenerUids } from '../os/socket-owner.js';
import type { DaemonRecord, Discovery } from './daemon-record.js';

/** The loopback addresses a URL's host name stands for, or null when it is not loopback. */
export const loopbackAddresses = (hostname: string): string[] | null => {
  const bare = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost') return ['127.0.0.1', '::1'];
  if (bare === '::1') return ['::1'];
  const octets = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(bare);
  return octets?.slice(1).every((o) => Number(o) <= 255) ? [bare] : null;
};

/** Who listens on a port: only this user, nobody, another user (its uid), or unknown where the kernel does not list sockets (not Linux). */
export type PortListener = 'mine' | 'none' | 'unknown' | { uid: number };

/** Who listens on `port` at these addresses (or at a wildcard address), as the kernel says. */
export const portListener = (addresses: readonly string[], port: number): PortListener => {
  const uids: number[] = [];
  for (const address of addresses) {
    const found = listenerUids(address, port);
    if (found === null || process.getuid === undefined) return 'unknown';
    uids.push(...found);
  }
  if (uids.length === 0) return 'none';
  const other = uids.find((uid) => uid !== process.getuid!());
  return other === undefined ? 'mine' : { uid: other };
};

/** Why `port` is not listened on by this user only, or null when it is (or the kernel cannot say). */
export const portNotMine = (addresses: readonly string[], port: number): string | null => {
  const listener = portListener(addresses, port);
  if (listener === 'mine' || listener === 'unknown') return null;
  return listener === 'none'
    ? `nothing listens on port ${port}`
    : `port ${port} is held by uid ${listener.uid}, not by you`;
};

/**
 * The daemon a record names, once verified: a loopback URL, served by the live process the record
 * names (this user's, started when it says), on a port only this user listens on. Otherwise why
 * not, for a "no daemon" answer: nothing is ever sent to a daemon that fails this.
 */
export const verifyRecord = (record: DaemonRecord): { discovery: Discovery } | { problem: string } => {
  const { pid, url, port } = record;
  if (typeof url !== 'string' || typeof port !== 'number' || typeof record.project_id !== 'string')
    return { problem: `pid ${pid} is still opening the project` };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { problem: `the daemon record's URL ${JSON.stringify(url)} is not a URL` };
  }
  const addresses = parsed.protocol === 'http:' ? loopbackAddresses(parsed.hostname) : null;
  if (addresses === null || Number(parsed.port) !== port)
    return {
      problem: `${url} is not a loopback address on port ${port}: pulse talks to a daemon on loopback only`,
    };
  const why = notMyProcess(pid, record.proc_start ?? null) ?? portNotMine(addresses, port);
  if (why !== null) return { problem: `the daemon at ${url} is gone (${why})` };
  return { discovery: record as Discovery };
};
