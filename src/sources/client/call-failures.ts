import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { errorMessage } from '../../../machines/error-message.js';
import type { ServerConfig } from '../config/config.js';
import { SourceCallError } from './source-call-error.js';

const seconds = (ms: number) => `${ms / 1000} s`;

const whereOf = (config: ServerConfig) => {
  if (config.kind === 'stdio') return `stdio: ${config.command}`;
  const url = new URL(config.url);
  return `http: ${url.origin}${url.pathname}`;
};

const whatToCheck = (config: ServerConfig) =>
  config.kind === 'stdio' ? 'check its command, args, env and cwd' : 'check its url and headers';

const isTimeout = (error: unknown) => error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout;

/** What the SDK refuses in a well-formed exchange: the connection is still good, as after an error answer. */
const REFUSED_ANSWERS: ReadonlySet<string> = new Set([
  SdkErrorCode.InvalidResult,
  SdkErrorCode.ListPaginationExceeded,
  SdkErrorCode.UnsupportedResultType,
]);

/** An error answer from a live server; anything else means the connection can no longer be trusted. */
const isAnswer = (error: unknown) =>
  error instanceof ProtocolError || (error instanceof SdkError && REFUSED_ANSWERS.has(error.code));

/** Why a connect failed: too slow, or refused, with where the server is, its last stderr line and what to check. */
export const connectFailure = (
  name: string,
  config: ServerConfig,
  error: unknown,
  { aborted, lastStderr }: { aborted: boolean; lastStderr: string },
): SourceCallError => {
  if (aborted || isTimeout(error)) {
    return new SourceCallError(
      `server "${name}" did not connect within ${seconds(config.timeoutMs)} (timeout_sec); it is skipped until it recovers`,
      { server: name, reason: 'timeout', cause: error },
    );
  }
  const closed = error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed;
  const what = closed ? 'it closed the connection before the MCP handshake ended' : errorMessage(error);
  const stderr = lastStderr ? `; its last stderr line: ${lastStderr}` : '';
  return new SourceCallError(
    `server "${name}" failed to connect (${whereOf(config)}): ${what}${stderr}; ${whatToCheck(config)}`,
    { server: name, reason: 'connect', cause: error },
  );
};

/** Why a tool call failed: too slow, an error answer (the connection is still good), or a lost connection. */
export const callFailure = (
  name: string,
  config: ServerConfig,
  tool: string,
  error: unknown,
  { aborted }: { aborted: boolean },
): SourceCallError => {
  if (aborted || isTimeout(error)) {
    return new SourceCallError(
      `server "${name}" did not answer "${tool}" within ${seconds(config.timeoutMs)} (timeout_sec); it is skipped until it recovers`,
      { server: name, reason: 'timeout', cause: error },
    );
  }
  if (isAnswer(error)) {
    return new SourceCallError(`server "${name}" answered "${tool}" with an error: ${errorMessage(error)}`, {
      server: name,
      reason: 'call',
      cause: error,
    });
  }
  return new SourceCallError(
    `server "${name}" lost the connection during "${tool}": ${errorMessage(error)}; it is reconnected on the next call`,
    { server: name, reason: 'closed', cause: error },
  );
};
