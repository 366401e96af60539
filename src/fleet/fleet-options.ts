import { readFileSync } from 'node:fs';
import { credsAuthenticator, type NodeConnectionOptions, nkeyAuthenticator } from '@nats-io/transport-node';

/** How this daemon joins a fleet: the NATS server and NATS's own auth, as `pulse start --fleet` was given them. */
export interface FleetOptions {
  /** `nats://host:4222` (several comma-separated: a cluster's seeds). */
  url: string;
  /** A `.creds` file (JWT and nkey seed), as `nsc` writes them. */
  credsFile?: string | undefined;
  /** A file holding an nkey seed (`SU…`). */
  nkeyFile?: string | undefined;
  user?: string | undefined;
  password?: string | undefined;
  token?: string | undefined;
  /** A CA file: the server's certificate must chain to it (TLS). */
  caFile?: string | undefined;
  /** Fleet project names the user allows `.pulse/fleet-project` to name (`--fleet-project`). */
  projects: string[];
}

/** A fleet setting pulse refuses; the message names it and the fix. */
export class FleetOptionsError extends Error {
  override name = 'FleetOptionsError';
}

/** The flags `pulse start` takes for a fleet (each also read from its `PULSE_FLEET*` variable). */
export interface FleetFlags {
  fleet?: string | undefined;
  fleetCreds?: string | undefined;
  fleetNkey?: string | undefined;
  fleetUser?: string | undefined;
  fleetCa?: string | undefined;
  fleetProject?: string[] | undefined;
}

const servers = (url: string): string[] =>
  url
    .split(',')
    .map((server) => server.trim())
    .filter(Boolean);

/**
 * The fleet this start asked for, or null when none was (no `--fleet`, no `PULSE_FLEET`): without
 * one nothing fleet-related runs. Secrets (password, token) come from the environment only, never
 * from a command line every account can read.
 */
export const fleetOptionsOf = (
  flags: FleetFlags,
  env: NodeJS.ProcessEnv = process.env,
): FleetOptions | null => {
  const url = flags.fleet ?? env.PULSE_FLEET;
  if (url === undefined || url.trim() === '') return null;
  for (const server of servers(url)) {
    let parsed: URL;
    try {
      parsed = new URL(server.includes('://') ? server : `nats://${server}`);
    } catch {
      throw new FleetOptionsError(
        `--fleet ${fleetLabel(server)} is not a NATS URL: give one like nats://host:4222.`,
      );
    }
    if (!['nats:', 'tls:'].includes(parsed.protocol))
      throw new FleetOptionsError(
        `--fleet ${fleetLabel(server)} is not a NATS URL (nats:// or tls://): give one like nats://host:4222.`,
      );
  }
  return {
    url,
    credsFile: flags.fleetCreds ?? env.PULSE_FLEET_CREDS,
    nkeyFile: flags.fleetNkey ?? env.PULSE_FLEET_NKEY,
    user: flags.fleetUser ?? env.PULSE_FLEET_USER,
    password: env.PULSE_FLEET_PASSWORD,
    token: env.PULSE_FLEET_TOKEN,
    caFile: flags.fleetCa ?? env.PULSE_FLEET_CA,
    projects: [
      ...(flags.fleetProject ?? []),
      ...(env.PULSE_FLEET_PROJECTS ?? '').split(',').map((name) => name.trim()),
    ].filter(Boolean),
  };
};

/** The fleet's servers as they may be shown: user, password or token in a URL replaced by `***`. */
export const fleetLabel = (url: string): string =>
  servers(url)
    .map((server) => server.replace(/^([a-z]+:\/\/)?[^@/]*@/i, (_match, scheme = '') => `${scheme}***@`))
    .join(',');

/** How the fleet authenticates, named without its secret: `creds file`, `user alice`, `token`. */
export const fleetAuthLabel = (options: FleetOptions): string => {
  const parts = [
    options.credsFile ? 'creds file' : null,
    options.nkeyFile ? 'nkey' : null,
    options.user ? `user ${options.user}` : null,
    options.token ? 'token' : null,
    options.caFile ? 'TLS with a CA' : null,
  ].filter((part) => part !== null);
  return parts.length === 0 ? 'no auth' : parts.join(', ');
};

/** The fleet's secrets (password, token, the URL's credentials), for every log line to redact. */
export const fleetSecrets = (options: FleetOptions): string[] =>
  [
    options.password,
    options.token,
    ...servers(options.url).flatMap((server) => /\/\/([^@/]*)@/.exec(server)?.[1]?.split(':') ?? []),
  ].filter((secret): secret is string => typeof secret === 'string' && secret.length >= 4);

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
    servers: servers(options.url),
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
