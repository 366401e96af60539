import { describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import { EventIndex } from '../../machines/event-index.js';
import { untrackedFiles } from '../../machines/pulse-files.js';
import { createSanitizer, isRedactedKey, MAX_ITEMS, REDACTED } from '../../src/inspect/sanitize.js';

const event = (n: number) => ({
  id: `evt_${n}`,
  timestamp: '2026-01-01T00:00:00.000000Z',
  kind: 'modified' as const,
  path: '.pulse/guidance.md',
  sha256: 'ab'.repeat(32),
  size: 10,
});

const guidance = 'Stop using the old API. This is the user guidance.';

const logContext = () => {
  const files = untrackedFiles();
  files['guidance.md'] = { ...files['guidance.md'], text: guidance, sha256: 'cd'.repeat(32), size: 51 };
  return {
    index: EventIndex.from(Array.from({ length: 1_000 }, (_, i) => event(i + 1))),
    files,
    warnings: [] as string[],
    lastError: null,
  };
};

describe('sanitizing what goes to the inspector', () => {
  it("summarises the log's index as its size and latest id, never the events", () => {
    const { sanitizeContext } = createSanitizer();
    const clean = sanitizeContext(logContext()) as unknown as Record<string, unknown>;
    expect(clean.index).toEqual({ size: 1_000, latestId: 'evt_1000' });
    expect(JSON.stringify(clean)).not.toContain('evt_999');
  });

  it("redacts each file's text and keeps its hash and size", () => {
    const { sanitizeContext } = createSanitizer();
    const clean = sanitizeContext(logContext());
    expect(clean.files['guidance.md']).toMatchObject({ text: REDACTED, sha256: 'cd'.repeat(32), size: 51 });
    expect(clean.files['task.md'].text).toBeNull();
    expect(JSON.stringify(clean)).not.toContain('old API');
  });

  it('redacts keys that name tokens, headers, secrets, passwords, cookies or environments, at any depth', () => {
    const { sanitizeEvent } = createSanitizer();
    const clean = sanitizeEvent({
      type: 'x',
      server: {
        headers: { 'X-Mailbox': 'work' },
        bearer_token: 'b',
        Authorization: 'Bearer a',
        env: { HOME: '/root' },
        envVars: ['A=1'],
        nested: { deeper: { apiKey: 'k', password: 'p', sessionCookie: 'c', clientSecret: 's' } },
      },
      source: 'cal',
      title: 'Standup',
      events: 3,
      tool: 'list_events',
    });
    expect(clean).toEqual({
      type: 'x',
      server: {
        headers: REDACTED,
        bearer_token: REDACTED,
        Authorization: REDACTED,
        env: REDACTED,
        envVars: REDACTED,
        nested: {
          deeper: { apiKey: REDACTED, password: REDACTED, sessionCookie: REDACTED, clientSecret: REDACTED },
        },
      },
      source: 'cal',
      title: 'Standup',
      events: 3,
      tool: 'list_events',
    });
  });

  it('keeps the context keys of the machines that name nothing secret', () => {
    for (const key of [
      'index',
      'files',
      'events',
      'deferred',
      'thinkTimeoutMs',
      'lastDeliveryAt',
      'sources',
      'fingerprints',
    ]) {
      expect(isRedactedKey(key), key).toBe(false);
    }
  });

  it("redacts an item's raw detail and summarises the poller that sent it", () => {
    const { sanitizeEvent } = createSanitizer();
    const poller = createActor(
      fromPromise(async () => 1),
      { id: 'poller:cal', systemId: 'poller:cal' },
    );
    const clean = sanitizeEvent({
      type: 'inbox.offer',
      items: [{ itemId: '1', title: 'Standup', startsAt: null, detail: '{"body":"private"}' }],
      replyTo: poller,
    });
    expect(clean).toEqual({
      type: 'inbox.offer',
      items: [{ itemId: '1', title: 'Standup', startsAt: null, detail: REDACTED }],
      replyTo: { actor: 'poller:cal' },
    });
  });

  it("redacts the sources' current secrets from every string, as they are when the value is sent", () => {
    let secrets: string[] = [];
    const { sanitizeEvent } = createSanitizer({ secrets: () => secrets });
    expect(sanitizeEvent({ title: 'token tok-123 leaked' })).toEqual({ title: 'token tok-123 leaked' });
    secrets = ['tok-123'];
    expect(sanitizeEvent({ title: 'token tok-123 leaked', list: ['tok-123'] })).toEqual({
      title: 'token *** leaked',
      list: ['***'],
    });
  });

  it('sends a long array as its last 20 items and a count, in order', () => {
    const { sanitizeContext } = createSanitizer();
    const clean = sanitizeContext({ recent: Array.from({ length: 50 }, (_, i) => i) }) as unknown as {
      recent: { count: number; last: number[] };
    };
    expect(clean.recent.count).toBe(50);
    expect(clean.recent.last).toEqual(Array.from({ length: MAX_ITEMS }, (_, i) => 30 + i));
    const short = sanitizeContext({ recent: [1, 2, 3] });
    expect(short.recent).toEqual([1, 2, 3]);
  });

  it('cuts long strings and says how long they were', () => {
    const { sanitizeEvent } = createSanitizer();
    const clean = sanitizeEvent({ lastError: 'x'.repeat(10_000) });
    expect(clean.lastError.length).toBeLessThanOrEqual(500);
    expect(clean.lastError).toMatch(/… \(10000 chars\)$/);
  });

  it('is idempotent and leaves the original untouched', () => {
    const { sanitizeContext } = createSanitizer({ secrets: () => ['tok-123'] });
    const context = {
      ...logContext(),
      recent: Array.from({ length: 30 }, (_, i) => `tok-123 ${i}`),
      lastError: 'y'.repeat(900),
    };
    const once = sanitizeContext(context);
    expect(sanitizeContext(once)).toEqual(once);
    expect(context.files['guidance.md'].text).toBe(guidance);
    expect(context.index).toBeInstanceOf(EventIndex);
  });

  it("sanitizes a promise actor's input and output, not only a machine's context", () => {
    const { sanitizeSnapshot } = createSanitizer();
    const clean = sanitizeSnapshot({
      status: 'done',
      input: { files: logContext().files, requested: true },
      output: { files: logContext().files, events: [event(1)], deferred: false },
      error: undefined,
    });
    expect(clean.status).toBe('done');
    expect(JSON.stringify(clean)).not.toContain('old API');
    expect(clean.output).toMatchObject({ events: [{ id: 'evt_1' }], deferred: false });
  });

  it("keeps a machine snapshot's value, status, children and tags, and drops the machine itself", () => {
    const { sanitizeSnapshot } = createSanitizer();
    const actor = createActor(fromPromise(async () => 1));
    const clean = sanitizeSnapshot({
      status: 'active',
      value: { running: 'waiting' },
      context: { polls: 2 },
      children: { 'poller:cal': actor },
      tags: new Set(['busy']),
      machine: { config: {} },
    });
    expect(clean).toEqual({
      status: 'active',
      value: { running: 'waiting' },
      context: { polls: 2 },
      children: { 'poller:cal': { id: 'poller:cal' } },
      tags: ['busy'],
    });
  });
});
