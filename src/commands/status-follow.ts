import { setTimeout as sleep } from 'node:timers/promises';
import { tokenHeaders } from '../store/daemon-token.js';
import type { SystemStatus } from '../system/system-status.js';

/** The daemon stopped answering while it was followed. */
export class DaemonGoneError extends Error {
  override name = 'DaemonGoneError';
}

/** How often `/status` is read when the stream is refused (16 pages open already). */
const POLL_MS = 1000;

/** The `event: status` frames of a Server-Sent Events body, parsed, as they arrive. */
async function* statusFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SystemStatus> {
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const lines = block.split('\n');
      if (!lines.includes('event: status')) continue;
      const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
      yield JSON.parse(data.join('\n')) as SystemStatus;
    }
  }
}

/**
 * Each status of a project as it changes: from its status stream (a frame within 100 ms of a
 * change, nothing while nothing changes), else, when the stream is refused, from `/status` once a
 * second. Ends when `signal` aborts; throws `DaemonGoneError` when the daemon stops answering.
 */
export async function* followStatus(
  { stream, status }: { stream: string; status: string },
  signal: AbortSignal,
): AsyncGenerator<SystemStatus> {
  let response: Response;
  try {
    response = await fetch(stream, { headers: tokenHeaders(), signal });
  } catch (error) {
    if (signal.aborted) return;
    throw new DaemonGoneError(
      `The daemon at ${new URL(stream).origin} does not answer: ${(error as Error).message}`,
    );
  }
  if (response.ok && response.body) {
    try {
      yield* statusFrames(response.body);
    } catch (error) {
      if (signal.aborted) return;
      throw new DaemonGoneError(
        `The daemon at ${new URL(stream).origin} stopped: ${(error as Error).message}`,
      );
    }
    if (signal.aborted) return;
    throw new DaemonGoneError(`The daemon at ${new URL(stream).origin} stopped.`);
  }
  await response.body?.cancel();
  while (!signal.aborted) {
    const polled = await fetch(status, { headers: tokenHeaders(), signal }).catch(() => null);
    if (signal.aborted) return;
    if (polled === null || !polled.ok)
      throw new DaemonGoneError(`The daemon at ${new URL(status).origin} stopped.`);
    yield (await polled.json()) as SystemStatus;
    await sleep(POLL_MS, undefined, { signal }).catch(() => undefined);
  }
}
