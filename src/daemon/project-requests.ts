import { request } from 'node:http';
import { z } from 'zod';
import type { AddedProject } from '../http/projects-route.js';
import { tokenRefusal } from '../store/daemon-token.js';
import { loopbackAddresses, portListener } from '../store/verify-daemon.js';

/** Past this a daemon asked to open a project (lock, folders, load) counts as not answering. */
const REQUEST_LIMIT_MS = 30_000;
/** Past this what holds the port is no pulse: a pulse lists its projects at once. */
const PROBE_LIMIT_MS = 2_000;

const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host);

/** A project a daemon says it added: what the CLI prints and records, checked before it is used. */
const addedSchema: z.ZodType<AddedProject> = z.object({
  id: z.string().min(1),
  root: z.string().min(1),
  url: z.string().min(1),
  summary: z.array(z.string()),
});

/** One CLI request to a daemon's `/projects`: its status and JSON body, or null when nothing answered. */
const ask = (
  origin: string,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  token: string | undefined,
  body?: unknown,
  limitMs = REQUEST_LIMIT_MS,
): Promise<{ status: number; body: Record<string, unknown> | null } | null> =>
  new Promise((resolve) => {
    const text = body === undefined ? '' : JSON.stringify(body);
    const sends = method !== 'GET';
    const req = request(
      new URL(path, origin),
      {
        method,
        // No keep-alive: the daemon may end right after it answered.
        agent: false,
        headers: {
          'x-pulse-cli': '1',
          ...(sends ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } : {}),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        timeout: limitMs,
      },
      (response) => {
        let data = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          data += chunk;
        });
        response.on('end', () => {
          let parsed: Record<string, unknown> | null = null;
          try {
            const value = JSON.parse(data) as unknown;
            if (typeof value === 'object' && value !== null) parsed = value as Record<string, unknown>;
          } catch {}
          resolve({ status: response.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end(text);
  });

/** The daemon origin a host and port name. */
export const daemonOrigin = (host: string, port: number) => `http://${urlHost(host)}:${port}`;

const failure = (answer: { status: number; body: Record<string, unknown> | null }, origin: string) =>
  answer.status === 401
    ? tokenRefusal(origin)
    : typeof answer.body?.error === 'string'
      ? answer.body.error
      : `the daemon at ${origin} answered ${answer.status}`;

/**
 * Asks the pulse on `host:port` to serve `root` too (`POST /projects`): what it answered, or null
 * when what holds the port is no pulse that serves several projects. Rejects with its reason when
 * it is one and refuses (a lock another daemon holds, a token needed, …).
 */
export const askToServe = async ({
  host,
  port,
  root,
  logLevel,
  token,
  notifyHeldAfterMs,
}: {
  host: string;
  port: number;
  root: string;
  logLevel: string;
  token: string | undefined;
  /** With `--notify`: the project's notifications, when an agent held counts as news. */
  notifyHeldAfterMs?: number | undefined;
}): Promise<AddedProject | null> => {
  const local = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  // Another user's program on the port is asked nothing: the token would go with the question.
  if (typeof portListener(loopbackAddresses(local) ?? [local], port) === 'object') return null;
  const origin = daemonOrigin(local, port);
  // Any program may hold the port: only one that lists projects as pulse does is asked more.
  const probe = await ask(origin, 'GET', '/projects', token, undefined, PROBE_LIMIT_MS);
  const pulseRefusal = probe?.status === 401 && String(probe.body?.fix ?? '').includes('PULSE_TOKEN');
  if (probe === null || (!pulseRefusal && probe.body?.name !== 'pulse-agent')) return null;
  const answer = await ask(origin, 'POST', '/projects', token, {
    project: root,
    log_level: logLevel,
    ...(notifyHeldAfterMs === undefined ? {} : { notify_held_after_ms: notifyHeldAfterMs }),
  });
  if (answer === null || answer.status === 404 || answer.status === 405) return null;
  // Not JSON: some other program's answer.
  if (answer.body === null) return null;
  if (answer.status === 201) {
    const added = addedSchema.safeParse(answer.body);
    if (added.success) return added.data;
    const why = added.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`);
    throw new Error(
      `The daemon at ${origin} said it added the project, but its answer is no project (${why.join('; ')}): stop what holds port ${port} and start again.`,
    );
  }
  throw new Error(failure(answer, origin));
};

/**
 * Asks the daemon at `url` to stop serving project `id` (`DELETE /projects/<id>`): how many it
 * still serves, or null when it did not answer (or is a pulse that serves one project only).
 */
export const askToRemove = async (
  url: string,
  id: string,
  token: string | undefined,
): Promise<{ remaining: number } | null> => {
  const { origin } = new URL(url);
  const answer = await ask(origin, 'DELETE', `/projects/${encodeURIComponent(id)}`, token);
  if (answer === null || answer.status === 405 || (answer.status === 404 && answer.body?.error === undefined))
    return null;
  if (answer.status === 200 && typeof answer.body?.remaining === 'number')
    return { remaining: answer.body.remaining };
  if (answer.status === 404 && String(answer.body?.error).startsWith('No route')) return null;
  throw new Error(failure(answer, origin));
};
