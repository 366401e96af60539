import { redactSecrets } from './redact-secrets.js';

/**
 * A redactor for log lines that remembers every secret it was ever given: a server dropped by an
 * edit of sources.json may still print its old token on its way out.
 */
export const createRedactor = (current: () => readonly string[]) => {
  const seen = new Set<string>();
  let secrets: string[] = [];
  let last: readonly string[] | null = null;
  const redact = (text: string): string => {
    const now = current();
    if (now !== last) {
      last = now;
      const before = seen.size;
      for (const secret of now) if (secret !== '') seen.add(secret);
      if (seen.size !== before) secrets = [...seen];
    }
    return secrets.length === 0 ? text : redactSecrets(text, secrets);
  };
  /** The strings in a log record redacted, before it is serialised: the JSON stays valid whatever a secret is. */
  const redactValue = (value: unknown): unknown => {
    if (secrets.length === 0 && current().length === 0) return value;
    if (typeof value === 'string') return redact(value);
    if (Array.isArray(value)) return value.map(redactValue);
    if (value instanceof Error) {
      return { type: value.name, message: redact(value.message), stack: redact(value.stack ?? '') };
    }
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, redactValue(field)]));
    }
    return value;
  };
  return { redact, redactValue };
};
