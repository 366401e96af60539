/** One desktop notification: what it says, and the key that makes it once (`acked:<event>`, `held:<agent>:<event>`, `delivery:<id>`). */
export interface Notification {
  key: string;
  title: string;
  body: string;
}

/** What showing one notification came to: shown, or no notifier on this machine (then pulse stops trying). */
export type NotifyOutcome = { shown: true } | { shown: false; missing: string };

export interface NotifierContext {
  /** Notifications waiting to be shown, oldest first. */
  queue: Notification[];
  /** The keys already shown or queued, the latest kept: the same one is never shown twice. */
  keys: string[];
  shown: number;
  failures: number;
  /** Why the last one could not be shown, until one is. */
  lastError: string | null;
  /** Why no notification can be shown here (no notify-send, no osascript); then none is tried again. */
  missing: string | null;
}

export type NotifierEvent = { type: 'notify.send'; notification: Notification };

/** Notifications waiting at most; past it the oldest is dropped (a desktop full of stale news helps no one). */
export const QUEUE_LIMIT = 8;
/** Keys remembered, so each thing is said once. */
export const KEYS_KEPT = 500;
