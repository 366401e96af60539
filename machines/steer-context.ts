import type { Asking } from './reply.js';

/** The two files a user steers with. */
export type SteerFile = 'guidance' | 'constraints';

/** Replace the file's text, or add a paragraph to it. */
export type SteerMode = 'replace' | 'append';

/** Who asked: `pulse guide` / `pulse constrain`, the status page, or another member of the fleet. */
export type SteerSource = 'cli' | 'page' | 'fleet';

/** One write asked for. */
export interface SteerRequest {
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

/** The answer to one request: what was written, or why nothing was (the message says why and the fix). */
export type SteerAnswer = { written: SteerWritten } | { refused: string };

/** A write asked for, with who hears its answer. */
export type SteerAsked = SteerRequest & Asking<SteerAnswer>;

/** How a write asked for ended, for the activity log: what, by whom, and what was written or why not. */
export type SteerOutcome = Pick<SteerRequest, 'file' | 'mode' | 'by' | 'origin'> & SteerAnswer;

export interface SteerContext {
  /** Requests waiting for the write in progress, oldest first. */
  queue: SteerAsked[];
  /** The request being written now. */
  current: SteerAsked | null;
  /** Writes that changed a file since start. */
  writes: number;
  /** The last write done or refused. */
  last: SteerOutcome | null;
}

export type SteerEvent = { type: 'steer.write' } & SteerAsked;

/** Requests waiting at most; one more is refused at once. */
export const STEER_QUEUE_LIMIT = 16;

/** The request a `steer.write` carries, without its type. */
export const askedOf = ({ requestId, replyTo, file, text, mode, by, origin }: SteerAsked): SteerAsked => ({
  requestId,
  replyTo,
  file,
  text,
  mode,
  by,
  ...(origin === undefined ? {} : { origin }),
});

/** How `asked` ended. */
export const outcomeOf = ({ file, mode, by, origin }: SteerRequest, answer: SteerAnswer): SteerOutcome => ({
  file,
  mode,
  by,
  ...(origin === undefined ? {} : { origin }),
  ...answer,
});

/** What the `writeSteer` effect is given: the request, never who asked. */
export const writeOf = ({ file, text, mode, by, origin }: SteerRequest): SteerRequest => ({
  file,
  text,
  mode,
  by,
  ...(origin === undefined ? {} : { origin }),
});
