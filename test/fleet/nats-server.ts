import { natsInstalled } from '../../bench/fleet/nats-server.js';

export { type NatsServer, natsInstalled, startNats } from '../../bench/fleet/nats-server.js';

const NO_NATS =
  'nats-server is not installed: run `bash scripts/install-nats.sh` (Debian package nats-server, 2.9) to run the fleet tests.';

/** Skips the suite, saying why, when nats-server is missing; in CI (PULSE_REQUIRE_NATS=1) fails it instead. */
export const natsOrSkip = (): boolean => {
  if (natsInstalled()) return true;
  if (process.env.PULSE_REQUIRE_NATS === '1') throw new Error(NO_NATS);
  console.warn(NO_NATS);
  return false;
};
