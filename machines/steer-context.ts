/** The two files a user steers with. */
export type SteerFile = 'guidance' | 'constraints';

/** Replace the file's text, or add a paragraph to it. */
export type SteerMode = 'replace' | 'append';

/** Who asked: `pulse guide` / `pulse constrain`, the status page, or another member of the fleet. */
export type SteerSource = 'cli' | 'page' | 'fleet';

/** One write asked for. */
export interface SteerRequest {
  requestId: number;
  file: SteerFile;
  text: string;
  mode: SteerMode;
  by: SteerSource;
  /** With `by: 'fleet'`, the machine the steer came from (`laptop (3f2a9c01)`). */
  origin?: string;
}

/** What a write left in the file: its path (`.pulse/guidance.md`), hash and size, and whether it changed. */
export interface SteerWritten {
  path: string;
  sha256: string;
  size: number;
  changed: boolean;
}

/** The answer to one request: what was written, or why nothing was. */
export type SteerReply = Pick<SteerRequest, 'requestId' | 'file' | 'mode' | 'by' | 'origin'> &
  ({ written: SteerWritten } | { error: string });

export interface SteerContext {
  /** Requests waiting for the write in progress, oldest first. */
  queue: SteerRequest[];
  /** The request being written now. */
  current: SteerRequest | null;
  /** The latest replies, for their callers to find by request id. */
  replies: SteerReply[];
  /** Writes that changed a file since start. */
  writes: number;
}

export type SteerEvent = { type: 'steer.write' } & SteerRequest;

/** Requests waiting at most; one more is refused at once. */
export const STEER_QUEUE_LIMIT = 16;
/** Replies kept for callers to read. */
export const REPLIES_KEPT = 32;

export const reply = (context: SteerContext, answer: SteerReply): SteerReply[] =>
  [...context.replies, answer].slice(-REPLIES_KEPT);

export const about = ({ requestId, file, mode, by, origin }: SteerRequest) => ({
  requestId,
  file,
  mode,
  by,
  ...(origin === undefined ? {} : { origin }),
});
