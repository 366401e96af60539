import type { ServerOptions } from 'node:http';

/** What the HTTP server allows a client: the defaults are in docs/reliability.md. */
export interface ConnectionLimits {
  /** A request's headers must arrive within this, or it gets 408 and is closed. */
  headersTimeoutMs: number;
  /** A whole request (headers and body) must arrive within this; a response may stream on. */
  requestTimeoutMs: number;
  /** Connections open at once; a newcomer past it takes the place of a stalled or idle one. */
  maxConnections: number;
}

/** The limits `pulse start` uses unless told otherwise. */
export const CONNECTION_DEFAULTS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  maxConnections: 256,
};

/** A limit the flags ask for that cannot work; the message says what would. */
export class ConnectionLimitError extends Error {
  override name = 'ConnectionLimitError';
}

/** The connection cap in force and where it came from. */
export interface ConnectionCap {
  max: number;
  /** The open-file limit it was sized against; null when unknown. */
  fileLimit: number | null;
  /** The default asked for, when the open-file limit made the cap smaller. */
  loweredFrom: number | null;
}

/**
 * The cap, leaving at least half of the open-file limit to the watcher, the logs, the sources
 * and Node itself: the default shrinks to fit, and an asked-for cap beyond it is refused.
 */
export const connectionCap = (asked: number | undefined, fileLimit: number | null): ConnectionCap => {
  const budget = fileLimit === null ? Number.POSITIVE_INFINITY : Math.max(1, Math.floor(fileLimit / 2));
  if (asked !== undefined && asked > budget) {
    throw new ConnectionLimitError(
      `--max-connections ${asked} leaves too few file descriptors: this process may open ${fileLimit} files, and half of them stay for the watcher, the logs and the sources. Use at most --max-connections ${budget}, or raise the limit (ulimit -n).`,
    );
  }
  const wanted = asked ?? CONNECTION_DEFAULTS.maxConnections;
  const max = Math.min(wanted, budget);
  return { max, fileLimit, loweredFrom: max < wanted ? wanted : null };
};

/** Refuses timeouts Node cannot apply: the headers arrive within the request, so within its timeout. */
export const checkTimeouts = ({ headersTimeoutMs, requestTimeoutMs }: ConnectionLimits): void => {
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConnectionLimitError(
      `--headers-timeout (${headersTimeoutMs} ms) must not be longer than --request-timeout (${requestTimeoutMs} ms): the headers are part of the request.`,
    );
  }
};

/** `http.createServer` options for the timeouts. */
export const timeoutOptions = ({ headersTimeoutMs, requestTimeoutMs }: ConnectionLimits): ServerOptions => ({
  headersTimeout: headersTimeoutMs,
  requestTimeout: requestTimeoutMs,
  // Node checks both timeouts only this often; its 30 s default kept a half-sent request ~90 s.
  connectionsCheckingInterval: Math.max(50, Math.min(2000, Math.floor(headersTimeoutMs / 5))),
});
