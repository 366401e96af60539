import { hostname, networkInterfaces } from 'node:os';
import { validateHostHeader } from '@modelcontextprotocol/server';
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
 * DNS-rebinding guard: a browser page on another site can reach a loopback port, but it
 * cannot make its Host say localhost. Requests naming any other host get 403. The SDK's
 * `validateHostHeader` reads the Host; ours stays around it for the refusal that names the allowed
 * hosts and `--allowed-host` (the SDK's says only "Invalid Host"); the Origin is `browserGuard`'s.
 */
export const hostGuard = ({ extraHosts = [] }: { extraHosts?: string[] } = {}): MiddlewareHandler => {
  const allowed = [...new Set([...LOOPBACK_NAMES, ...extraHosts.map((h) => h.toLowerCase())])];
  return async function hostGuardMiddleware(c, next) {
    const host = c.req.header('host');
    if (host !== undefined && !validateHostHeader(host, allowed).ok) {
      return refuse(c, 403, `Host "${host}" is not allowed: pulse answers only on ${allowed.join(', ')}.`);
    }
    await next();
  };
};
