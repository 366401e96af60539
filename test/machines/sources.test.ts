// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the config syntax the reasons quote.
import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise, waitFor } from 'xstate';
import type { PolledSource } from '../../machines/external.js';
import { GATE_DEFAULTS } from '../../machines/gate-settings.js';
import { pollerMachine } from '../../machines/poller.js';
import type { FetchOutcome } from '../../machines/poller-context.js';
import type { Reply } from '../../machines/reply.js';
import { sourcesMachine } from '../../machines/sources.js';
import type {
  LoadedSources,
  ServerSummary,
  SourceTestReply,
  SourceTestResult,
} from '../../machines/sources-context.js';

const source = (name: string, server: string, enabled = true): PolledSource => ({
  name,
  server,
  tool: 'list',
  args: {},
  intervalMs: 60_000,
  enabled,
});

const server = (name: string, disabled: string | null = null): ServerSummary => ({
  name,
  transport: 'stdio',
  target: 'node server.js',
  env: [],
  headers: [],
  timeoutMs: 30_000,
  disabled,
});

const loaded = (sources: PolledSource[], servers: ServerSummary[]): LoadedSources => ({
  sources,
  servers,
  fingerprints: Object.fromEntries(sources.map((s) => [s.name, `${s.name}|${s.server}`])),
  warnings: [],
  gate: GATE_DEFAULTS,
  thinker: { kind: 'rules', model: null },
  trust: { status: 'none' },
});

/** A poller whose first call never ends: here only whether it runs matters. */
const idlePoller = pollerMachine.provide({
  actors: { fetchItems: fromPromise<FetchOutcome, PolledSource>(() => new Promise(() => {})) },
});

const passed = (name: string): SourceTestResult => ({
  source: name,
  server: 'cal',
  ok: true,
  error: null,
  items: [],
  item_count: 0,
  raw: null,
  tool: null,
});

/**
 * The sources supervisor with a scripted sequence of loads (an Error is a broken file), a
 * poller that does nothing, and tests that end when the test says so.
 */
/** A stub that hears the supervisor's replies to tests, by request id, as the ask module would. */
const heardReplies = () => {
  const heard = new Map<number, SourceTestReply>();
  const ref = createActor(
    fromCallback<Reply<SourceTestReply>>(({ receive }) =>
      receive((reply) => {
        if ('answer' in reply) heard.set(reply.requestId, reply.answer);
      }),
    ),
  ).start();
  return { heard, ref };
};

const supervisor = (loads: Array<LoadedSources | Error>) => {
  const pending: Array<{ name: string; end: (result: SourceTestResult) => void }> = [];
  const actor = createActor(
    sourcesMachine.provide({
      actors: {
        loadSources: fromPromise(async () => {
          const next = loads.shift();
          if (next === undefined || next instanceof Error) throw next ?? new Error('no load scripted');
          return next;
        }),
        poller: idlePoller,
        testSource: fromPromise<SourceTestResult, { source: PolledSource; raw: boolean }>(
          ({ input }) => new Promise((end) => pending.push({ name: input.source.name, end })),
        ),
        watchTrust: fromCallback(() => {}),
      },
    }),
  ).start();
  const loadedOnce = (count: number) =>
    waitFor(actor, (s) => s.matches('running') && s.context.loads >= count);
  const replies = heardReplies();
  const replyTo = (requestId: number) => replies.heard.get(requestId);
  const pollers = () =>
    ['cal', 'gh', 'off'].filter((name) => actor.system.get(`poller:${name}`) !== undefined);
  return { actor, pending, loadedOnce, replyTo, replies: replies.ref, pollers };
};

describe('sources supervisor: servers disabled by an unset variable', () => {
  it('starts no poller for a source whose server is disabled, and starts the others', async () => {
    const s = supervisor([
      loaded(
        [source('cal', 'cal'), source('gh', 'gh'), source('off', 'cal', false)],
        [server('cal'), server('gh', '${T} is not set')],
      ),
    ]);
    await s.loadedOnce(1);
    expect(s.pollers()).toEqual(['cal']);
    expect(s.actor.getSnapshot().context.error).toBeNull();
  });

  it('starts the poller once an edit makes the server runnable, and stops it when the server is disabled again', async () => {
    const sources = [source('cal', 'cal'), source('gh', 'gh')];
    const s = supervisor([
      loaded(sources, [server('cal'), server('gh', '${T} is not set')]),
      loaded(sources, [server('cal'), server('gh')]),
      loaded(sources, [server('cal'), server('gh', '${T} is not set')]),
    ]);
    await s.loadedOnce(1);
    expect(s.pollers()).toEqual(['cal']);
    s.actor.send({ type: 'config.changed' });
    await s.loadedOnce(2);
    expect(s.pollers()).toEqual(['cal', 'gh']);
    s.actor.send({ type: 'config.changed' });
    await s.loadedOnce(3);
    expect(s.pollers()).toEqual(['cal']);
  });

  it('restarts the poller of a source whose config changed, and keeps the others running as they were', async () => {
    const sources = [source('cal', 'cal'), source('gh', 'gh')];
    const first = loaded(sources, [server('cal'), server('gh')]);
    const edited = { ...first, fingerprints: { ...first.fingerprints, cal: 'cal|cal|every 30 s' } };
    const s = supervisor([first, edited]);
    await s.loadedOnce(1);
    const before = { cal: s.actor.system.get('poller:cal'), gh: s.actor.system.get('poller:gh') };
    s.actor.send({ type: 'config.changed' });
    await s.loadedOnce(2);
    expect(s.pollers()).toEqual(['cal', 'gh']);
    expect(s.actor.system.get('poller:cal'), 'a new poller for the changed source').not.toBe(before.cal);
    expect(s.actor.system.get('poller:gh'), 'the unchanged source keeps its poller').toBe(before.gh);
  });

  it('knows whether a last good config keeps running through a broken edit, or none was ever loaded', async () => {
    const broken = supervisor([new Error('sources.json at line 1: is not valid JSON')]);
    await broken.loadedOnce(1);
    expect(broken.actor.getSnapshot().context).toMatchObject({
      error: expect.any(String),
      goodConfigLoaded: false,
    });

    const good = supervisor([loaded([source('cal', 'cal')], [server('cal')]), new Error('not valid JSON')]);
    await good.loadedOnce(1);
    good.actor.send({ type: 'config.changed' });
    await good.loadedOnce(2);
    expect(good.actor.getSnapshot().context).toMatchObject({
      error: 'not valid JSON',
      goodConfigLoaded: true,
    });
    expect(good.pollers(), 'the last good config keeps polling').toEqual(['cal']);
  });
});

describe('sources supervisor: testing a source on request', () => {
  const config = () =>
    loaded(
      [source('cal', 'cal'), source('gh', 'gh'), source('off', 'cal', false)],
      [server('cal'), server('gh', '${GITHUB_TOKEN} is not set')],
    );

  it('refuses an unknown source at once, listing the known ones', async () => {
    const s = supervisor([config()]);
    await s.loadedOnce(1);
    s.actor.send({ type: 'sources.test', requestId: 1, replyTo: s.replies, source: 'nope', raw: false });
    expect(s.replyTo(1)).toEqual({
      refused: 'unknown',
      error: 'No source "nope" in sources.json. Known: cal, gh, off.',
    });
    expect(s.pending).toEqual([]);
  });

  it("answers a source of a disabled server at once with the reason, naming the source's own server", async () => {
    const s = supervisor([config()]);
    await s.loadedOnce(1);
    s.actor.send({ type: 'sources.test', requestId: 2, replyTo: s.replies, source: 'gh', raw: true });
    expect(s.replyTo(2)).toMatchObject({
      result: {
        source: 'gh',
        server: 'gh',
        ok: false,
        error: 'source "gh" cannot run: server "gh" is disabled: ${GITHUB_TOKEN} is not set',
      },
    });
    expect(s.pending).toEqual([]);
  });

  it('runs a test through the provided effect, a source with enabled false included, and records its result', async () => {
    const s = supervisor([config()]);
    await s.loadedOnce(1);
    s.actor.send({ type: 'sources.test', requestId: 3, replyTo: s.replies, source: 'off', raw: false });
    expect(s.pending.map((p) => p.name)).toEqual(['off']);
    expect(s.replyTo(3)).toBeUndefined();
    s.pending[0]!.end(passed('off'));
    await waitFor(s.actor, () => s.replyTo(3) !== undefined);
    expect(s.replyTo(3)).toEqual({ result: passed('off') });
    expect(s.actor.getSnapshot().context.testing).toEqual([]);
    expect(Object.keys(s.actor.getSnapshot().children), 'the ended test is no child any more').not.toContain(
      'test.3',
    );
  });

  it('refuses a fifth test while four run, and takes one again once a test ended', async () => {
    const s = supervisor([config()]);
    await s.loadedOnce(1);
    for (const requestId of [10, 11, 12, 13])
      s.actor.send({ type: 'sources.test', requestId, replyTo: s.replies, source: 'cal', raw: false });
    s.actor.send({ type: 'sources.test', requestId: 14, replyTo: s.replies, source: 'cal', raw: false });
    expect(s.replyTo(14)).toMatchObject({ refused: 'busy' });
    s.pending[0]!.end(passed('cal'));
    await waitFor(s.actor, () => s.replyTo(10) !== undefined);
    s.actor.send({ type: 'sources.test', requestId: 15, replyTo: s.replies, source: 'cal', raw: false });
    expect(s.replyTo(15)).toBeUndefined();
    expect(s.pending).toHaveLength(5);
  });

  it('answers a test that the effect failed to run as a failed result of that source, not a stuck request', async () => {
    const actor = createActor(
      sourcesMachine.provide({
        actors: {
          loadSources: fromPromise(async () => config()),
          poller: idlePoller,
          testSource: fromPromise<SourceTestResult, { source: PolledSource; raw: boolean }>(async () => {
            throw new Error('the effect broke');
          }),
          watchTrust: fromCallback(() => {}),
        },
      }),
    ).start();
    await waitFor(actor, (s) => s.matches('running'));
    const replies = heardReplies();
    actor.send({ type: 'sources.test', requestId: 20, replyTo: replies.ref, source: 'cal', raw: false });
    const done = await waitFor(actor, () => replies.heard.has(20));
    expect(replies.heard.get(20)).toMatchObject({
      result: { source: 'cal', server: 'cal', ok: false, error: 'the effect broke' },
    });
    expect(done.context.testing).toEqual([]);
  });

  it('keeps tests running through a reload of sources.json', async () => {
    const s = supervisor([config(), config()]);
    await s.loadedOnce(1);
    s.actor.send({ type: 'sources.test', requestId: 30, replyTo: s.replies, source: 'cal', raw: false });
    s.actor.send({ type: 'config.changed' });
    await s.loadedOnce(2);
    s.pending[0]!.end(passed('cal'));
    await waitFor(s.actor, () => s.replyTo(30) !== undefined);
    expect(s.replyTo(30)).toMatchObject({ result: { ok: true } });
  });
});

describe('sources supervisor: a sources.json its user has not trusted', () => {
  const config = () => loaded([source('cal', 'cal')], [server('cal')]);
  const untrusted = (): LoadedSources => ({
    ...loaded([], [server('cal', 'not started: not trusted')]),
    trust: { status: 'untrusted', hash: 'sha256:ab', command: 'pulse trust -p /p', model: null },
  });

  it('waits untrusted with no poller, and refuses a source test with the command that trusts it', async () => {
    const s = supervisor([untrusted()]);
    await waitFor(s.actor, (snapshot) => snapshot.matches('untrusted'));
    expect(s.pollers()).toEqual([]);
    s.actor.send({ type: 'sources.test', requestId: 30, replyTo: s.replies, source: 'cal', raw: false });
    expect(s.replyTo(30)).toMatchObject({
      refused: 'untrusted',
      error: expect.stringContaining('pulse trust -p /p'),
    });
    expect(s.pending).toHaveLength(0);
  });

  it('loads again when its trust changes, and runs the sources of the file now trusted', async () => {
    const s = supervisor([untrusted(), config()]);
    await waitFor(s.actor, (snapshot) => snapshot.matches('untrusted'));
    s.actor.send({ type: 'trust.changed' });
    await s.loadedOnce(2);
    expect(s.pollers()).toContain('cal');
    s.actor.send({ type: 'sources.test', requestId: 31, replyTo: s.replies, source: 'cal', raw: false });
    expect(s.replyTo(31)).toBeUndefined();
    expect(s.pending).toHaveLength(1);
  });

  it('stops every poller when an edit makes the file untrusted', async () => {
    const s = supervisor([config(), untrusted()]);
    await s.loadedOnce(1);
    expect(s.pollers()).toContain('cal');
    s.actor.send({ type: 'config.changed' });
    await waitFor(s.actor, (snapshot) => snapshot.matches('untrusted'));
    expect(s.pollers()).toEqual([]);
  });
});
