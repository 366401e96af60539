import type { ServerSummary } from '../../../machines/sources-context.js';

/** A word of a command line as a shell would need it: bare when safe, else in double quotes. */
const shellWord = (word: string) => (/^[\w@%+=:,./${}-]+$/.test(word) ? word : JSON.stringify(word));

/** A URL as written, with a password (`user:pass@`) and query values masked. */
export const maskedUrl = (url: string) =>
  url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i, '$1***@').replace(/([?&][^=&#]*=)[^&#]*/g, '$1***');

/** A stdio server as status shows it, from its entry as written. */
export const stdioSummary = (
  name: string,
  server: { command: string; args: string[]; env: Record<string, string>; timeout_sec: number },
  disabled: string | null,
): ServerSummary => ({
  name,
  transport: 'stdio',
  target: [server.command, ...server.args].map(shellWord).join(' '),
  env: Object.keys(server.env),
  headers: [],
  timeoutMs: Math.round(server.timeout_sec * 1000),
  disabled,
});

/** An http server as status shows it, from its entry as written. */
export const httpSummary = (
  name: string,
  server: {
    url: string;
    headers: Record<string, string>;
    bearer_token?: string | undefined;
    timeout_sec: number;
  },
  disabled: string | null,
): ServerSummary => {
  const headers = Object.keys(server.headers);
  const hasAuthorization = headers.some((header) => header.toLowerCase() === 'authorization');
  return {
    name,
    transport: 'http',
    target: maskedUrl(server.url),
    env: [],
    headers: server.bearer_token !== undefined && !hasAuthorization ? [...headers, 'Authorization'] : headers,
    timeoutMs: Math.round(server.timeout_sec * 1000),
    disabled,
  };
};
