import { describe, expect, it } from 'vitest';
import { fleetSteer, parseFleetSteer } from '../../src/fleet/fleet-messages.js';
import { fleetAuthLabel, fleetLabel, fleetOptionsOf, fleetSecrets } from '../../src/fleet/fleet-options.js';

const machine = { id: 'a1b2c3d4e5f6', name: 'laptop' };
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe('fleet options', () => {
  it('are off without --fleet or PULSE_FLEET', () => {
    expect(fleetOptionsOf({}, {})).toBeNull();
    expect(fleetOptionsOf({}, { PULSE_FLEET: ' ' })).toBeNull();
  });

  it('take the password and token from the environment only, and never show them', () => {
    const options = fleetOptionsOf(
      { fleet: 'nats://bob:hunter22@nats.example:4222', fleetUser: 'alice' },
      { PULSE_FLEET_PASSWORD: 'pa55word-x', PULSE_FLEET_TOKEN: 't0ken-value' },
    )!;
    expect(fleetLabel(options.url)).toBe('nats://***@nats.example:4222');
    expect(fleetAuthLabel(options)).toBe('user alice, token');
    expect(fleetSecrets(options)).toEqual(expect.arrayContaining(['pa55word-x', 't0ken-value', 'hunter22']));
  });

  it('refuses a URL that is not NATS, naming it without its credentials', () => {
    expect(() => fleetOptionsOf({ fleet: 'http://u:secretpw@host' }, {})).toThrow(
      /http:\/\/\*\*\*@host is not a NATS URL/,
    );
  });
});

describe('a steer from the fleet', () => {
  const good = fleetSteer(machine, 'guidance', 'Use the new parser.\n', 'fst_1_abc', '2026-12-03T13:00:00Z');

  it('is taken whole when every field checks', () => {
    expect(parseFleetSteer(bytes(good), 'guidance')).toEqual(good);
  });

  it('is refused when its hash, file, subject, size, id or machine is wrong', () => {
    expect(parseFleetSteer(bytes({ ...good, sha256: '0'.repeat(64) }), 'guidance')).toMatch(/hash/);
    expect(parseFleetSteer(bytes(good), 'constraints')).toMatch(/subject/);
    expect(parseFleetSteer(bytes({ ...good, file: 'sources' }), 'sources')).toMatch(
      /guidance or constraints/,
    );
    const huge = fleetSteer(machine, 'guidance', 'x'.repeat(70 * 1024), 'fst_1_abc', good.at);
    expect(parseFleetSteer(bytes(huge), 'guidance')).toMatch(/over/);
    expect(parseFleetSteer(bytes({ ...good, steerId: '$(rm -rf /)' }), 'guidance')).toMatch(/steer id/);
    expect(parseFleetSteer(bytes({ ...good, machine: { id: 'x', name: '\u001b[2J' } }), 'guidance')).toMatch(
      /machine/,
    );
    expect(parseFleetSteer(new TextEncoder().encode('{'), 'guidance')).toBe('not JSON');
  });
});
