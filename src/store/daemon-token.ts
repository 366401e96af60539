/**
 * How the CLI's clients (`pulse status`, `focus`, `sources list`, `hook`) authenticate to a daemon
 * started with a token: `PULSE_TOKEN` from their own environment, as `Authorization: Bearer`.
 */
export const tokenHeaders = (env: NodeJS.ProcessEnv = process.env): Record<string, string> =>
  env.PULSE_TOKEN ? { authorization: `Bearer ${env.PULSE_TOKEN}` } : {};

/** What to do when the daemon at `url` answered 401; names the variable, never its value. */
export const tokenRefusal = (url: string, env: NodeJS.ProcessEnv = process.env): string =>
  env.PULSE_TOKEN
    ? `the daemon at ${url} refused PULSE_TOKEN: set it to the token the daemon was started with`
    : `the daemon at ${url} requires a token: set PULSE_TOKEN to the token it was started with`;

/** The daemon refused our token (or its absence): the message says which variable to set. */
export class DaemonTokenError extends Error {
  override name = 'DaemonTokenError';
}
