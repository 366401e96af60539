import { request } from 'node:http';
import { tokenHeaders, tokenRefusal } from '../daemon-token.js';
import type { HookAnswer, HookQuestion } from './hook-answer.js';

/**
 * Past this the daemon counts as down and the hook lets the call through. Not shorter: a machine
 * busy with the agent's own build slows the daemon's answer, and failing open then would stop
 * enforcing the replan exactly when the agent is busiest. A daemon that is not running is known
 * at once (connection refused); only a hung one costs this wait.
 */
export const ASK_TIMEOUT_MS = 2000;

const describeError = (error: NodeJS.ErrnoException, url: string): string =>
  error.code === 'ECONNREFUSED' ? `connection refused at ${url}` : error.message;

/**
 * Asks the daemon's `POST /hook`, over node:http (cheaper to load than fetch). Rejects with a
 * short sentence: refused, timed out, or what the daemon said.
 */
export const askDaemon = (url: string, question: HookQuestion, timeoutMs = ASK_TIMEOUT_MS) =>
  new Promise<HookAnswer>((resolve, reject) => {
    const body = JSON.stringify(question);
    const req = request(
      new URL('/hook', url),
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
          if (response.statusCode !== 200) {
            reject(new Error(`${url} answered ${response.statusCode}: ${text.slice(0, 200)}`));
            return;
          }
          try {
            resolve(JSON.parse(text) as HookAnswer);
          } catch {
            reject(new Error(`${url} answered something that is not JSON`));
          }
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
