/** Why a call failed: no answer in time, no connection, an error answer, or a connection lost. */
export type SourceCallFailure = 'timeout' | 'connect' | 'call' | 'closed';

/** A tool call on a source server failed; `message` says what happened and what to check. */
export class SourceCallError extends Error {
  override name = 'SourceCallError';
  readonly server: string;
  readonly reason: SourceCallFailure;

  constructor(
    message: string,
    { server, reason, cause }: { server: string; reason: SourceCallFailure; cause?: unknown },
  ) {
    super(message, { cause });
    this.server = server;
    this.reason = reason;
  }
}
