import type { SystemStatus } from '../../src/system/system-status.js';

/** One Server-Sent Events frame as a browser's EventSource would see it, comments kept apart. */
export interface SseFrame {
  event: string | null;
  data: string;
  retry: number | null;
  comment: string | null;
}

/** A status stream opened with plain fetch: its response, the frames so far, and a way to wait for one. */
export interface StatusStreamReader {
  response: Response;
  frames: SseFrame[];
  /** The `event: status` frames, parsed. */
  statuses(): SystemStatus[];
  /** Waits for a status frame (one that arrived already counts) for which `check` holds. */
  next(check: (status: SystemStatus) => boolean, timeoutMs?: number): Promise<SystemStatus>;
  /** Everything received, as text. */
  text(): string;
  close(): void;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
}

const parseFrame = (block: string): SseFrame => {
  const frame: SseFrame = { event: null, data: '', retry: null, comment: null };
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim();
    else if (line.startsWith('event: ')) frame.event = line.slice(7);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
    else if (line.startsWith('retry: ')) frame.retry = Number(line.slice(7));
  }
  frame.data = data.join('\n');
  return frame;
};

/** Opens `url` as an event stream and reads it in the background until `close()` or the server ends it. */
export const openStatusStream = async (url: string, init: RequestInit = {}): Promise<StatusStreamReader> => {
  const abort = new AbortController();
  const response = await fetch(url, { ...init, signal: abort.signal });
  const frames: SseFrame[] = [];
  const waiters = new Set<() => void>();
  let raw = '';
  let buffer = '';
  let over = false;
  const read = async (body: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const text = decoder.decode(value, { stream: true });
        raw += text;
        buffer += text;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          frames.push(parseFrame(buffer.slice(0, end)));
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
        }
        for (const wake of waiters) wake();
      }
    } catch {
      // Aborted by close(), or the connection dropped: either way the stream is over.
    }
  };
  const ended = (async () => {
    if (response.ok && response.body) await read(response.body);
    over = true;
    for (const wake of waiters) wake();
  })();
  const statuses = () =>
    frames.filter((f) => f.event === 'status').map((f) => JSON.parse(f.data) as SystemStatus);
  return {
    response,
    frames,
    statuses,
    text: () => raw,
    ended,
    close: () => abort.abort(),
    next: (check, timeoutMs = 10_000) =>
      new Promise<SystemStatus>((resolve, reject) => {
        const look = () => {
          const found = statuses().find(check);
          if (found) return done(() => resolve(found));
          if (over) done(() => reject(new Error(`the stream ended before the frame came:\n${raw}`)));
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`no such status frame within ${timeoutMs} ms; got:\n${raw}`))),
          timeoutMs,
        );
        const done = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(look);
          settle();
        };
        waiters.add(look);
        look();
      }),
  };
};
