import { validateHostHeader } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostNameOf } from '../../src/http/host-guard.js';

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
