import { hostname, networkInterfaces } from 'node:os';
import type { MiddlewareHandler } from 'hono';
import { refuse } from './refusal.js';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

const asHostName = (address: string) =>
  address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;

/**
 * The names a client may use for a daemon bound to `host`, beside the loopback ones: the address
 * itself, and for a wildcard (0.0.0.0, ::) this machine's name and every interface address. A
 * DNS name pointing here must be added with `--allowed-host`.
 */
export const boundHostNames = (host: string): string[] => {
  const names = [asHostName(host)];
  if (WILDCARDS.has(host)) {
    names.push(hostname());
    for (const entries of Object.values(networkInterfaces())) {
      for (const entry of entries ?? []) names.push(asHostName(entry.address.replace(/%.*$/, '')));
    }
  }
  return names;
};

/**
 * The host name a Host header names (port and case dropped, IPv6 in brackets), or null when it
 * names none; read as the SDK's `validateHostHeader` reads it (test/http/host-guard.test.ts holds
 * the two to the same answers). Ours, not the SDK's: importing that builds every spec schema of
 * the SDK, 15 ms of each start that the hooks, the page and `/healthz` never need.
 */
export const hostNameOf = (host: string): string | null => {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
};

/**
 * DNS-rebinding guard: a browser page on another site can reach a loopback port, but it
 * cannot make its Host say localhost. Requests naming any other host get 403, with the refusal
 * naming the allowed hosts and `--allowed-host`; the Origin is `browserGuard`'s.
 */
export const hostGuard = ({ extraHosts = [] }: { extraHosts?: string[] } = {}): MiddlewareHandler => {
  const allowed = [...new Set([...LOOPBACK_NAMES, ...extraHosts.map((h) => h.toLowerCase())])];
  return async function hostGuardMiddleware(c, next) {
    const host = c.req.header('host');
    const name = host === undefined ? null : hostNameOf(host);
    if (host !== undefined && (name === null || !allowed.includes(name))) {
      return refuse(c, 403, `Host "${host}" is not allowed: pulse answers only on ${allowed.join(', ')}.`);
    }
    await next();
  };
};
