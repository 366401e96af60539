import { EventIndex } from '../../machines/event-index.js';
import { redactSecrets } from '../log/redact-secrets.js';

/** What a redacted value becomes. */
export const REDACTED = '[redacted]';

/** Arrays longer than this are sent as their last items and a count. */
export const MAX_ITEMS = 20;
/** Strings longer than this are cut (after secrets are redacted). */
export const MAX_STRING = 500;
/** Nesting below this depth is not sent. */
const MAX_DEPTH = 8;

/** File contents (a TrackedFile's `text`) and a source item's raw `detail`. */
const CONTENT_KEYS = new Set(['text', 'detail']);
const SENSITIVE_PART = /token|secret|passw|bearer|authori[sz]|cookie|header|credential|api.?key/i;
const SENSITIVE_WORDS = new Set(['env', 'auth']);

const words = (key: string) =>
  key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);

// The machines use a few dozen keys: decide each once, not on every snapshot.
const decided = new Map<string, boolean>();
const DECIDED_KEPT = 2_000;

/** A key whose value is never sent: tokens, headers, secrets, environments, file contents, item detail. */
export const isRedactedKey = (key: string): boolean => {
  let redacted = decided.get(key);
  if (redacted === undefined) {
    redacted =
      CONTENT_KEYS.has(key) ||
      SENSITIVE_PART.test(key) ||
      words(key).some((word) => SENSITIVE_WORDS.has(word));
    if (decided.size < DECIDED_KEPT) decided.set(key, redacted);
  }
  return redacted;
};

interface ActorLike {
  id: string;
  sessionId: string;
  systemId?: string;
  send: unknown;
}

const isActorRef = (value: object): value is ActorLike =>
  'sessionId' in value && typeof (value as { send?: unknown }).send === 'function';

/** The parts of a snapshot the inspector shows; the rest (machine, nodes, getters) stays home. */
interface SnapshotLike {
  status?: string;
  value?: unknown;
  context?: unknown;
  output?: unknown;
  error?: unknown;
  input?: unknown;
  children?: Record<string, unknown>;
  tags?: Iterable<string>;
}

/** The three hooks the inspector calls; each returns a new, bounded, redacted value. */
export interface Sanitizer {
  sanitizeContext<T>(context: T): T;
  sanitizeEvent<T>(event: T): T;
  /** A whole snapshot: its context, and a promise actor's input, output and error too. */
  sanitizeSnapshot(snapshot: unknown): SnapshotLike;
}

/**
 * Makes what goes to the inspector safe and cheap: no file contents, item detail, tokens,
 * headers or environments; strings with the sources' secrets redacted; the event log's index
 * summarised (size, latest id); long arrays cut to their last 20 items with a count.
 * Idempotent, so a value sanitized twice is the same as once.
 */
export const createSanitizer = ({
  secrets = () => [],
}: {
  secrets?: () => readonly string[];
} = {}): Sanitizer => {
  const clean = (value: unknown, list: readonly string[], depth: number): unknown => {
    if (typeof value === 'string') {
      const redacted = list.some((secret) => secret !== '' && value.includes(secret))
        ? redactSecrets(value, list)
        : value;
      return redacted.length > MAX_STRING
        ? `${redacted.slice(0, MAX_STRING - 20)}… (${redacted.length} chars)`
        : redacted;
    }
    if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
    if (depth >= MAX_DEPTH) return '[…]';
    if (value instanceof EventIndex) return { size: value.size, latestId: value.latest?.id ?? null };
    if (isActorRef(value)) return { actor: value.systemId ?? value.id };
    if (value instanceof Error) return { name: value.name, message: clean(value.message, list, depth + 1) };
    if (value instanceof Date) return value.toISOString();
    if (value instanceof Set) return clean([...value], list, depth);
    if (value instanceof Map) return clean(Object.fromEntries(value), list, depth);
    if (Array.isArray(value)) {
      const items = value.length > MAX_ITEMS ? value.slice(-MAX_ITEMS) : value;
      const cleaned = items.map((item) => clean(item, list, depth + 1));
      return value.length > MAX_ITEMS ? { count: value.length, last: cleaned } : cleaned;
    }
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] =
        item === null || item === undefined || !isRedactedKey(key) ? clean(item, list, depth + 1) : REDACTED;
    }
    return out;
  };
  const sanitize = <T>(value: T): T => clean(value, secrets(), 0) as T;
  return {
    sanitizeContext: sanitize,
    sanitizeEvent: sanitize,
    sanitizeSnapshot(snapshot) {
      const s = (snapshot ?? {}) as SnapshotLike;
      const list = secrets();
      const out: SnapshotLike = { status: s.status };
      if ('value' in s) out.value = s.value;
      if ('context' in s) out.context = clean(s.context, list, 0);
      for (const key of ['output', 'error', 'input'] as const) {
        if (s[key] !== undefined) out[key] = clean(s[key], list, 0);
      }
      if (s.children) {
        out.children = Object.fromEntries(Object.keys(s.children).map((id) => [id, { id }]));
      }
      if (s.tags) out.tags = [...s.tags];
      return out;
    },
  };
};
