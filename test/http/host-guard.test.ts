import { validateHostHeader } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { hostGuard, hostNameOf } from '../../src/http/host-guard.js';

const ALLOWED = ['localhost', '127.0.0.1', '[::1]', 'pulse.lan'];

/** Whether the guard lets a Host through, as host-guard.ts decides it. */
const oursAllows = (host: string) => {
  const name = hostNameOf(host);
  return name !== null && ALLOWED.includes(name);
};

/** Host headers near the allowed names: ports, case, IPv6 forms, userinfo, paths, odd characters. */
const nearHost = fc
  .tuple(
    fc.constantFrom('', 'evil.example@', 'x:y@', '\t', ' '),
    fc.oneof(
      fc.constantFrom(
        ...ALLOWED,
        'LOCALHOST',
        '::1',
        '[::1',
        '127.1',
        '0x7f.1',
        '2130706433',
        '[::ffff:127.0.0.1]',
      ),
      fc.constantFrom('localhost.', 'localhost.evil.example', '127.0.0.1.evil.example', 'pulse.lan.evil'),
      fc.string({ maxLength: 12 }),
    ),
    fc.constantFrom('', ':', ':80', ':7777', ':99999', ':x', '/', '/path', '#frag', '?q', '\\', '%00', ' '),
  )
  .map(([before, name, after]) => `${before}${name}${after}`);

describe("the host guard's reading of a Host header", () => {
  it("answers as the SDK's validateHostHeader for hostile and near-miss Host headers", () => {
    fc.assert(
      fc.property(fc.oneof(nearHost, fc.string(), fc.string({ unit: 'binary' })), (host) => {
        expect(oursAllows(host), JSON.stringify(host)).toBe(validateHostHeader(host, ALLOWED).ok);
      }),
      { numRuns: 5000 },
    );
  });

  it('reads the name without the port and in lower case, and refuses what names no host', () => {
    expect(hostNameOf('LocalHost:8765')).toBe('localhost');
    expect(hostNameOf('[::1]:8765')).toBe('[::1]');
    expect(hostNameOf('evil.example@localhost')).toBe('localhost');
    expect(hostNameOf('')).toBeNull();
    expect(hostNameOf('[::1')).toBeNull();
    expect(hostNameOf('local host')).toBeNull();
  });
});

describe("the host guard on requests, keeping each Host header's verdict", () => {
  it("answers every request as the SDK's validateHostHeader, a Host seen before and past the verdicts it keeps", async () => {
    const app = new Hono().use(hostGuard({ extraHosts: ['pulse.lan'] })).get('*', (c) => c.text('ok'));
    /** The Host as the request carries it (Headers trims it), or null when no request can carry it. */
    const carried = (host: string) => {
      try {
        return new Headers({ host }).get('host');
      } catch {
        return null;
      }
    };
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(nearHost, fc.string()), { minLength: 1, maxLength: 20 }),
        async (hosts) => {
          // Each twice: the second is answered from the kept verdict while there is room for it.
          for (const host of [...hosts, ...hosts.reverse()]) {
            const sent = carried(host);
            if (sent === null) continue;
            const answer = await app.request('/', { headers: { host: sent } });
            const expected = validateHostHeader(sent, ALLOWED).ok ? 200 : 403;
            expect(answer.status, JSON.stringify(sent)).toBe(expected);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
