import { hostname, networkInterfaces } from 'node:os';
import type { MiddlewareHandler } from 'hono';
import { type GuardCheck, guardMiddleware } from './guards.js';
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

/** How many Host headers' verdicts are kept: a client sends one; past it each is read afresh. */
const KEPT_VERDICTS = 64;

/**
 * DNS-rebinding guard: a browser page on another site can reach a loopback port, but it
 * cannot make its Host say localhost. Requests naming any other host get 403, with the refusal
 * naming the allowed hosts and `--allowed-host`; the Origin is `browserGuard`'s. Each Host
 * header's verdict is kept (a few of them), so a client's every request does not parse it again.
 */
export const hostCheck = ({ extraHosts = [] }: { extraHosts?: string[] } = {}): GuardCheck => {
  const allowed = [...new Set([...LOOPBACK_NAMES, ...extraHosts.map((h) => h.toLowerCase())])];
  const verdicts = new Map<string, boolean>();
  const isAllowed = (host: string): boolean => {
    let verdict = verdicts.get(host);
    if (verdict === undefined) {
      const name = hostNameOf(host);
      verdict = name !== null && allowed.includes(name);
      if (verdicts.size < KEPT_VERDICTS) verdicts.set(host, verdict);
    }
    return verdict;
  };
  return function hostGuardCheck(c) {
    const host = c.req.header('host');
    if (host === undefined || isAllowed(host)) return undefined;
    return refuse(c, 403, `Host "${host}" is not allowed: pulse answers only on ${allowed.join(', ')}.`);
  };
};

/** `hostCheck` as a middleware of its own. */
export const hostGuard = (options: { extraHosts?: string[] } = {}): MiddlewareHandler =>
  guardMiddleware(hostCheck(options));
