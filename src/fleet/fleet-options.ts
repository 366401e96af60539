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

/** The NATS servers a `--fleet` URL names, comma-separated. */
export const fleetServers = (url: string): string[] =>
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
  for (const server of fleetServers(url)) {
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
  fleetServers(url)
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
    ...fleetServers(options.url).flatMap((server) => /\/\/([^@/]*)@/.exec(server)?.[1]?.split(':') ?? []),
  ].filter((secret): secret is string => typeof secret === 'string' && secret.length >= 4);
