import { readFileSync } from 'node:fs';
import { credsAuthenticator, type NodeConnectionOptions, nkeyAuthenticator } from '@nats-io/transport-node';
import { type FleetOptions, FleetOptionsError, fleetServers } from './fleet-options.js';

// Apart from fleet-options.ts so the NATS client loads with the fleet member only, not at every start-up.

const readAuthFile = (file: string, what: string): Uint8Array => {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new FleetOptionsError(
      `The fleet's ${what} ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? error}): check --fleet-${what === 'credentials file' ? 'creds' : 'nkey'}.`,
    );
  }
};

/** The NATS client's connection options: servers, auth passed through as given, reconnecting forever with backoff. */
export const fleetConnectOptions = (
  options: FleetOptions,
  name: string,
): Partial<NodeConnectionOptions> & { servers: string[] } => {
  const authenticator = options.credsFile
    ? credsAuthenticator(readAuthFile(options.credsFile, 'credentials file'))
    : options.nkeyFile
      ? nkeyAuthenticator(
          new TextEncoder().encode(
            new TextDecoder().decode(readAuthFile(options.nkeyFile, 'nkey seed file')).trim(),
          ),
        )
      : undefined;
  let attempt = 0;
  return {
    servers: fleetServers(options.url),
    name,
    ...(authenticator ? { authenticator } : {}),
    ...(options.user ? { user: options.user, pass: options.password ?? '' } : {}),
    ...(options.token ? { token: options.token } : {}),
    ...(options.caFile ? { tls: { caFile: options.caFile } } : {}),
    waitOnFirstConnect: true,
    maxReconnectAttempts: -1,
    // Backoff: 250 ms doubling to 10 s, with jitter, so a fleet of members does not reconnect at once.
    reconnectDelayHandler: () => {
      attempt = Math.min(attempt + 1, 6);
      return Math.min(250 * 2 ** attempt, 10_000) * (0.5 + Math.random() / 2);
    },
    pingInterval: 5_000,
    maxPingOut: 2,
  };
};
