import { request } from 'node:http';
import { tokenHeaders, tokenRefusal } from '../store/daemon-token.js';

/**
 * Past this the daemon counts as down and the hook lets the call through. Not shorter: a machine
 * busy with the agent's own build slows the daemon's answer, and failing open then would stop
 * enforcing the replan exactly when the agent is busiest. A daemon that is not running is known
 * at once (connection refused); only a hung one costs this wait.
 */
export const ASK_TIMEOUT_MS = 8000;

const describeError = (error: NodeJS.ErrnoException, url: string): string =>
  error.code === 'ECONNREFUSED' ? `connection refused at ${url}` : error.message;

/** The daemon answered and refused the hook (403: another account's daemon, a page's request): its sentence says why. */
export class HookRefusedError extends Error {
  override name = 'HookRefusedError';
}

/** The `error` sentence of a JSON refusal, else the body's start. */
const refusalOf = (text: string): string => {
  try {
    const { error } = JSON.parse(text) as { error?: unknown };
    if (typeof error === 'string') return error;
  } catch {}
  return text.slice(0, 200);
};

/** One hook call to forward: the agent, its event, the project it was set up for, and the agent's JSON. */
export interface ForwardedHook {
  agent: string;
  event: string;
  project: string;
  body: string;
}

/**
 * Forwards the agent's hook JSON to the daemon's `POST /hook/<agent>/<event>`, over node:http
 * (cheaper to load than fetch), and resolves to the agent's answer. Rejects with a short sentence:
 * refused (a `HookRefusedError` when the daemon said so), timed out, or what the daemon said.
 */
export const askDaemon = (
  url: string,
  { agent, event, project, body }: ForwardedHook,
  timeoutMs = ASK_TIMEOUT_MS,
) =>
  new Promise<string>((resolve, reject) => {
    const target = new URL(`/hook/${agent}/${event}`, url);
    target.searchParams.set('project', project);
    const req = request(
      target,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...tokenHeaders(),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => {
          clearTimeout(timer);
          if (response.statusCode === 401) {
            reject(new Error(tokenRefusal(url)));
            return;
          }
          if (response.statusCode === 403) {
            reject(new HookRefusedError(`the daemon at ${url} refused the hook: ${refusalOf(text)}`));
            return;
          }
          if (response.statusCode !== 200) {
            reject(new Error(`${url} answered ${response.statusCode}: ${text.slice(0, 200)}`));
            return;
          }
          resolve(text.trim());
        });
      },
    );
    const timer = setTimeout(
      () => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new Error(describeError(error, url)));
    });
    req.end(body);
  });
