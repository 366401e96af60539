import { mkdir } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStatusStream, type StatusStreamReader } from '../http/sse-reader.js';
import { launchChromium, needBrowser, shotsDir, text, watchedPage as watched } from '../support/browser.js';
import {
  callTool,
  connectClient,
  oneShot,
  type RunningDaemon,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { save } from '../support/files.js';
import { startModelServer } from '../support/model-server.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';

/*
 * The status page, end to end: a real `pulse start` serves `/` and `/status/stream`; plain fetch
 * reads the stream as EventSource does, and Debian's Chromium (driven by playwright-core, never a
 * downloaded browser) shows the page changing as the user and the agent act.
 */

const PLANTED = 'PLANTED-GUIDANCE-never-on-the-page';
const HOSTILE_TITLE = '<img src=x onerror="document.title=\'pwned\'">Budget review';

const started = trackStarted();

const newProject = async (prefix = 'pulse-page-') => {
  const project = await tempProject(prefix);
  started.projects.push(project);
  await mkdir(join(project, '.pulse'), { recursive: true });
  return project;
};

const start = async (project: string, args: string[] = []) => {
  const daemon = await startDaemon(project, { args });
  started.daemons.push(daemon);
  return daemon;
};

/** sources.json with one stdio fixture source, `cal`, listing `items` (with `reflection` when given); or with no source at all. */
const writeSources = async (project: string, items: unknown[] | null, reflection?: unknown) => {
  const cal = await fixtureFiles(project, 'cal', { items: items ?? [] });
  const config =
    items === null
      ? { mcpServers: {}, sources: [] }
      : {
          mcpServers: { cal: fixtureCommand(cal.args) },
          sources: [{ name: 'cal', server: 'cal', tool: 'list_events', args: {}, interval_sec: 300 }],
          ...(reflection === undefined ? {} : { reflection }),
        };
  await saveSources(project, JSON.stringify(config));
};

/** What Chromium sends with the status page's own EventSource (no Origin on a same-origin GET). */
const PAGE_HEADERS = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' };

const stream = async (daemon: RunningDaemon, headers: Record<string, string> = {}) => {
  const reader = await openStatusStream(new URL('/status/stream', daemon.url).href, { headers });
  started.streams.push(reader);
  return reader;
};

type SystemStatus = Awaited<ReturnType<StatusStreamReader['next']>>;

const statusOf = async (daemon: RunningDaemon): Promise<SystemStatus> =>
  (await fetch(new URL('/status', daemon.url))).json() as Promise<SystemStatus>;

/** Ends a client's MCP session the way a client does when it leaves: DELETE /mcp. */
const endSession = (client: Client) => (client.transport as StreamableHTTPClientTransport).terminateSession();

/** A GET through node:http, which lets the test name the Host; the body is not read. */
const rawGet = (url: string, headers: Record<string, string>) =>
  new Promise<{ status: number; type: string | undefined }>((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      resolve({ status: res.statusCode!, type: res.headers['content-type'] });
      res.destroy();
    });
    req.on('error', reject);
    req.end();
  });

describe('the status page over plain HTTP', () => {
  let project: string;
  let daemon: RunningDaemon;

  beforeAll(async () => {
    project = await newProject();
    daemon = await start(project);
  });

  afterAll(started.cleanUp);

  afterEach(() => {
    for (const reader of started.streams.splice(0)) reader.close();
  });

  it('serves one self-contained HTML page at / that may run only its own script', async () => {
    const response = await fetch(new URL('/', daemon.url));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toMatch(/connect-src 'self'/);
    const html = await response.text();
    expect(html).toContain(project);
    // The script is built by esbuild, which prints strings in double quotes.
    expect(html).toContain('new EventSource("status/stream")');
    // Data is shown as text only, and nothing is loaded from elsewhere.
    expect(html).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('arrives with the status of the moment drawn: cards, plain-language states and the active state on each diagram', async () => {
    const html = await (await fetch(new URL('/', daemon.url))).text();
    expect(html).toContain('<p class="headline" id="replan-headline">No replan pending</p>');
    expect(html).toContain('Nothing to replan: guidance and constraints have not changed.');
    expect(html).toContain('No agent is connected over MCP.');
    // The replan diagram marks where the machine is, and only there.
    const replan = /<figure[^>]*id="machine-replan"[\s\S]*?<\/figure>/.exec(html)![0];
    expect(replan).toContain('<g class="state atomic active" data-state="idle"');
    expect(replan.match(/ active"/g)).toHaveLength(1);
    // No script, no stylesheet, no font, no image from anywhere: the diagrams are inline SVG.
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)="(?!data:)/);
  });

  it('lists each MCP session in /status with its client, name and last check-in, and drops it when the session ends', async () => {
    const client = await connectClient(daemon.url);
    started.clients.push(client);
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const connected = await statusOf(daemon);
    expect(connected.agents).toEqual([
      expect.objectContaining({
        session: sessionId,
        client_name: 'pulse-test',
        client_version: '1.0.0',
        agent: null,
        holds_delivery: null,
      }),
    ]);
    await callTool(client, 'pulse_should_interrupt', { agent: 'http-test' });
    const named = (await statusOf(daemon)).agents[0]!;
    expect(named.agent).toBe('http-test');
    expect(named.connected_at).toBe(connected.agents[0]!.connected_at);
    expect(Date.parse(named.last_request_at)).toBeGreaterThanOrEqual(Date.parse(named.connected_at));

    await endSession(client);
    expect((await statusOf(daemon)).agents).toEqual([]);
  });

  it('keeps /healthz, /status and /mcp as they were, and names the page in a 404', async () => {
    expect((await fetch(new URL('/healthz', daemon.url))).status).toBe(200);
    const status = await (await fetch(new URL('/status', daemon.url))).json();
    expect(status.replan.state).toBe('idle');
    const { status: code, body } = await oneShot(daemon.url, 'tools/list');
    expect(code).toBe(200);
    expect(body.result!.tools!.length).toBeGreaterThan(0);
    const missing = await fetch(new URL('/nope', daemon.url));
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toBe(
      "No route GET /nope. Each project's MCP endpoint is /p/<id>/mcp (GET /projects lists them); the status page is /.",
    );
  });

  it('takes 16 streams, 8 from each origin, refuses the 17th with a 503 that says why, and frees a place when one closes', async () => {
    const open = await Promise.all(
      Array.from({ length: 16 }, (_, i) => stream(daemon, i % 2 === 0 ? PAGE_HEADERS : {})),
    );
    await Promise.all(open.map((reader) => reader.next(() => true)));

    const refused = await fetch(new URL('/status/stream', daemon.url));
    expect(refused.status).toBe(503);
    expect((await refused.json()).error).toMatch(/Too many status streams are open \(16\)/);
    // The rest of the daemon does not care.
    expect((await fetch(new URL('/healthz', daemon.url))).status).toBe(200);

    const placeFree = () =>
      waitUntil(async () => {
        const probe = await fetch(new URL('/status/stream', daemon.url));
        await probe.body?.cancel();
        return probe.status === 200;
      });
    for (const reader of open) reader.close();
    // Every closed stream gives its place back (the daemon notices a moment later): 16 fit again.
    const again = await waitUntil(async () => {
      const readers = await Promise.all(
        Array.from({ length: 16 }, (_, i) => stream(daemon, i % 2 === 0 ? PAGE_HEADERS : {})),
      );
      if (readers.every((reader) => reader.response.status === 200)) return readers;
      for (const reader of readers) reader.close();
      return undefined;
    });
    // The daemon notices closed streams a moment later; the next test needs a place.
    for (const reader of again) reader.close();
    await placeFree();
  });

  it('streams the whole status first, then each change, naming files but never showing their text', async () => {
    const reader = await stream(daemon);
    expect(reader.response.status).toBe(200);
    expect(reader.response.headers.get('content-type')).toBe('text/event-stream');
    const first = await reader.next(() => true);
    expect(reader.frames[0]!.event).toBe('status');
    expect(first.replan).toMatchObject({ state: 'idle', pending_replan_event_id: null });
    expect(first.actors.map((a) => a.id)).toContain('watcher');

    await save(join(project, '.pulse', 'guidance.md'), `# Guidance\n\n${PLANTED}\n`);
    const pending = await reader.next((s) => s.replan.state === 'pending');
    expect(pending.replan.pending_replan_files).toEqual(['.pulse/guidance.md']);
    expect(pending.recent_events[0]).toMatchObject({
      id: pending.replan.pending_replan_event_id,
      path: '.pulse/guidance.md',
      kind: 'modified',
    });
    expect(reader.text()).not.toContain(PLANTED);
  });

  it('shows a poller when sources.json adds its source and drops it when the source goes, on the same stream', async () => {
    const reader = await stream(daemon);
    await writeSources(project, [{ id: 'cal-1', title: 'Standup' }]);
    const added = await reader.next((s) => s.sources.pollers.some((p) => p.items_seen === 1));
    expect(added.actors.map((a) => a.id)).toContain('poller:cal');
    expect(added.sources.pollers[0]).toMatchObject({ source: 'cal', state: 'waiting', last_error: null });

    await writeSources(project, null);
    const removed = await reader.next((s) => s.sources.pollers.length === 0);
    expect(removed.actors.map((a) => a.id)).not.toContain('poller:cal');
  });

  it('answers only loopback names: 403 for another Host or Origin, on the page and on the stream', async () => {
    for (const path of ['/', '/status/stream']) {
      const url = new URL(path, daemon.url).href;
      expect(await rawGet(url, { host: `evil.example:${daemon.port}` })).toMatchObject({ status: 403 });
      expect(await rawGet(url, { origin: 'http://evil.example' })).toMatchObject({ status: 403 });
      expect(await rawGet(url, { host: `localhost:${daemon.port}` })).toMatchObject({ status: 200 });
    }
  });
});

describe('the status page in Chromium', () => {
  let browser: Browser | undefined;
  let shots: string;

  beforeAll(async () => {
    shots = await shotsDir();
  });

  afterAll(async () => {
    await browser?.close();
    await started.cleanUp();
  });

  const watchedPage = async (options: { javaScriptEnabled?: boolean } = {}) => {
    browser ??= await launchChromium();
    return watched(browser, options);
  };

  /**
   * The text of the cards and diagrams, every relative time masked (they tick between two loads),
   * without the steer forms' result lines, where the script says it loaded each file.
   */
  const mainText = async (page: Page) =>
    (
      (await page.locator('main').evaluate((main) => {
        const copy = main.cloneNode(true) as HTMLElement;
        for (const line of copy.querySelectorAll('.steer-result')) line.remove();
        return copy.textContent;
      })) ?? ''
    ).replace(/\b(in \d+ (s|min|h|d)|\d+ (s|min|h|d) ago|now)\b/g, '<time>');

  const activeStates = (page: Page, machine: string) =>
    page
      .locator(`#machine-${machine} g.active[data-state]`)
      .evaluateAll((boxes) => boxes.map((box) => box.getAttribute('data-state')));

  it('shows the status without JavaScript, the same once the script takes over, and loads nothing else', async (context) => {
    needBrowser(context);
    const project = await newProject();
    const daemon = await start(project);
    const url = `http://127.0.0.1:${daemon.port}/`;

    const still = await watchedPage({ javaScriptEnabled: false });
    await still.page.goto(url);
    expect(await text(still.page, '#conn')).toBe('Snapshot from the server (live updates need JavaScript)');
    expect(await text(still.page, '#replan-headline')).toBe('No replan pending');
    expect(await text(still.page, '#actors-body')).toContain(
      'Watching .pulse/ and the project root for edits.',
    );
    expect(await activeStates(still.page, 'replan')).toEqual(['idle']);
    const serverText = await mainText(still.page);

    const live = await watchedPage();
    await live.page.goto(url);
    await expect.poll(() => text(live.page, '#conn')).toBe('Live');
    await expect.poll(() => text(live.page, '#updated')).toMatch(/^updated /);
    await expect
      .poll(() => text(live.page, 'form.steer .steer-result'))
      .toMatch(/^Loaded \.pulse\/guidance\.md as it is now/);
    expect(await mainText(live.page)).toBe(serverText);
    expect(await activeStates(live.page, 'replan')).toEqual(['idle']);
    expect(await activeStates(live.page, 'log')).toEqual([
      'ready',
      'ready.scan',
      'ready.scan.idle',
      'ready.replace',
      'ready.replace.task.md',
      'ready.replace.task.md.here',
      'ready.replace.guidance.md',
      'ready.replace.guidance.md.here',
      'ready.replace.constraints.md',
      'ready.replace.constraints.md.here',
      'ready.replace.plan.md',
      'ready.replace.plan.md.here',
      'ready.ack',
      'ready.ack.idle',
    ]);
    // On a 1280 px window every diagram shows whole: none scrolls sideways.
    const scrolling = await live.page
      .locator('figure.diagram .scroll')
      .evaluateAll((boxes) =>
        boxes.filter((box) => box.scrollWidth > box.clientWidth).map((box) => box.parentElement!.id),
      );
    expect(scrolling).toEqual([]);
    await live.page.screenshot({ path: join(shots, 'idle.png'), fullPage: true });

    expect([...still.problems, ...live.problems]).toEqual([]);
    expect(new Set([...still.requests, ...live.requests])).toEqual(
      new Set(['/', '/status/stream', '/steer']),
    );
  }, 60_000);

  it('names the thinker in force: the rules while no client can sample, the agent once one can, nobody while the model fails', async (context) => {
    needBrowser(context);
    const project = await newProject();
    await writeSources(project, [{ id: 'cal-1', title: 'Standup moved to 10:30' }], { thinker: 'sampling' });
    const daemon = await start(project);
    const { page, problems } = await watchedPage();
    await page.goto(`http://127.0.0.1:${daemon.port}/`);
    await expect.poll(() => text(page, '#conn')).toBe('Live');
    expect(await text(page, '#thinker')).toBe(
      'rules (configured: sampling)no connected client offers sampling; the rules judge until one connects',
    );

    // An agent whose client can sample connects: the page follows at once.
    const sampler = new Client(
      { name: 'page-sampler', version: '1.0.0' },
      { capabilities: { sampling: {} } },
    );
    sampler.setRequestHandler('sampling/createMessage', async () => ({
      role: 'assistant',
      model: 'agent-model',
      content: { type: 'text', text: '{"judgements": []}' },
    }));
    await sampler.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    started.clients.push(sampler);
    await expect.poll(() => text(page, '#thinker')).toBe('sampling (page-sampler)');
    await endSession(sampler);
    await expect.poll(() => text(page, '#thinker')).toMatch(/^rules \(configured: sampling\)/);

    // A model that fails and asks to be left alone: nobody judges, and the page says until when.
    const model = await startModelServer({
      fallback: { kind: 'status', status: 503, headers: { 'retry-after': '120' } },
    });
    try {
      const failing = await newProject();
      await writeSources(failing, [{ id: 'cal-1', title: 'Outage in eu-west' }], {
        thinker: 'model',
        model: { base_url: model.baseUrl, model: 'triage' },
      });
      const down = await start(failing);
      await page.goto(`http://127.0.0.1:${down.port}/`);
      await expect
        .poll(() => text(page, '#thinker'), { timeout: 15_000 })
        .toMatch(
          /^nobody \(configured: model triage\)the model endpoint \(triage\) failed 1 time in a row \(HTTP 503\); it asked to be left alone \(Retry-After\), so it is asked again at \d\d:\d\d:\d\d UTC\. Meanwhile nobody judges: the events wait in the inbox/,
        );
      expect(await page.locator('#thinker .error').count()).toBe(1);
      await page.screenshot({ path: join(shots, 'thinker-failing.png'), fullPage: true });
    } finally {
      await model.close();
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('follows agents, a replan and a delivery live, shows the stream dropping, and comes back by itself', async (context) => {
    needBrowser(context);
    // The folder name and an item title are markup: the page must show them as text.
    const project = await newProject('pulse-page-<img src=x onerror=alert(1)>-');
    await writeSources(project, [
      { id: 'cal-1', title: HOSTILE_TITLE },
      { id: 'cal-2', title: 'Standup moved to 10:30' },
    ]);
    const daemon = await start(project);
    const { page, problems, requests } = await watchedPage();

    await page.goto(`http://127.0.0.1:${daemon.port}/`);
    await page.evaluate('window.samePage = true');
    await expect.poll(() => text(page, '#conn')).toBe('Live');
    expect(await text(page, '#replan-headline')).toBe('No replan pending');
    expect(await text(page, '#replan-body .internal')).toBe('idle');
    expect(await text(page, 'header .project')).toBe(project);
    expect(await text(page, '#focus-body .headline')).toBe('Off');
    expect(await text(page, '#agents-body')).toMatch(/^No agent is connected/);
    await expect.poll(() => text(page, '#pollers-body tbody')).toMatch(/cal.*waiting.*ago.*in \d+ min.*2/);
    await expect
      .poll(() => text(page, '#machine-poller figcaption'))
      .toMatch(/cal: Waiting: next poll in \d+ min/);

    // An agent connects: the page lists its client by the name and version it gave.
    const agent = await connectClient(daemon.url);
    started.clients.push(agent);
    await expect.poll(() => text(page, '#agents-body tbody')).toMatch(/not named\s*pulse-test 1\.0\.0/);

    // It checks in and the delivery goes out to it: the page names it and lists the titles.
    await waitUntil(
      async () =>
        (
          await callTool<{ needs_attention: boolean }>(agent, 'pulse_should_interrupt', {
            agent: 'page-test',
          })
        ).needs_attention,
      { timeoutMs: 15_000, intervalMs: 100, describe: () => 'a delivery' },
    );
    // Known by its session (a name counts only without one), named by its clientInfo.
    await expect
      .poll(() => text(page, '#delivery-body .headline'))
      .toMatch(/^Out to pulse-test 1\.0\.0 \(session [0-9a-f]{8}…\)$/);
    const deliveryId = (await statusOf(daemon)).gate.delivery!.delivery_id;
    await expect.poll(() => text(page, '#agents-body tbody')).toContain(`page-testpulse-test 1.0.0`);
    expect(await text(page, '#agents-body tbody')).toContain(`holds ${deliveryId}`);
    const delivery = (await text(page, '#delivery-body'))!;
    expect(delivery).toContain(HOSTILE_TITLE);
    expect(delivery).toContain('Standup moved to 10:30');
    expect(delivery).toMatch(/lease ends\s*in \d+ (s|min)/);
    expect(await text(page, '#machine-gate figcaption')).toMatch(
      /Out to pulse-test 1\.0\.0 \(session [0-9a-f]{8}…\): waiting for its acknowledgement \(lease ends in \d+ (s|min)\)/,
    );
    expect(await activeStates(page, 'gate')).toEqual(['awaiting']);
    expect(await page.locator('#delivery-body time').first().getAttribute('title')).toMatch(
      /^\d{4}-\d\d-\d\dT[\d:.]+Z$/,
    );
    await page.screenshot({ path: join(shots, 'delivery-out.png'), fullPage: true });

    // A second agent works in the project too: each must acknowledge the change itself.
    const other = await connectClient(daemon.url);
    started.clients.push(other);

    // The user changes guidance: the page shows the pending replan without a reload, in words and on the diagram.
    await save(join(project, '.pulse', 'guidance.md'), `# Guidance\n\n${PLANTED}\n`);
    await expect.poll(() => text(page, '#replan-headline')).toMatch(/^Replan pending/);
    const answer = await callTool<{ pending_replan_event_id: string }>(agent, 'pulse_should_interrupt', {
      agent: 'page-test',
    });
    const event = answer.pending_replan_event_id;
    expect(await text(page, '#replan-event')).toBe(event);
    expect(await text(page, '#replan-files')).toBe('.pulse/guidance.md');
    expect(await text(page, '#replan-body .says')).toMatch(
      new RegExp(
        `^Waiting for 2 agents, each to acknowledge ${event} \\(guidance\\.md changed (now|\\d+ s ago)\\)\\.$`,
      ),
    );
    expect(await activeStates(page, 'replan')).toEqual(['pending']);
    expect(await text(page, '#events-body tbody tr')).toContain(event);
    expect(await page.title()).toMatch(/^Replan pending · pulse · /);
    await page.screenshot({ path: join(shots, 'replan-pending.png'), fullPage: true });

    expect(await page.locator('#replan-owing li').count()).toBe(2);

    // One agent acknowledges: the other still owes it, one line on the page.
    const ack = await callTool<{ accepted: boolean }>(agent, 'pulse_ack_replan', { event_id: event });
    expect(ack.accepted).toBe(true);
    await expect.poll(() => page.locator('#replan-owing li').count()).toBe(1);
    expect(await text(page, '#replan-owing li')).toMatch(
      new RegExp(`^pulse-test 1\\.0\\.0 \\(session [0-9a-f]{8}…\\) owes ${event}$`),
    );
    expect(await text(page, '#replan-headline')).toMatch(/^Replan pending/);
    await page.screenshot({ path: join(shots, 'replan-one-agent-owes.png'), fullPage: true });

    // The other acknowledges too: nothing is pending any more, and the diagram moves.
    expect(
      (await callTool<{ accepted: boolean }>(other, 'pulse_ack_replan', { event_id: event })).accepted,
    ).toBe(true);
    await expect.poll(() => text(page, '#replan-headline')).toBe('No replan pending');
    expect(await text(page, '#replan-body .internal')).toBe('acknowledged');
    expect(await activeStates(page, 'replan')).toEqual(['acknowledged']);
    expect(await page.locator('#replan-event').count()).toBe(0);

    // The agents leave (DELETE /mcp): the page drops them.
    await endSession(agent);
    await endSession(other);
    await expect.poll(() => text(page, '#agents-body')).toMatch(/^No agent is connected/);

    // Nothing the sources or the folder name said became markup, and nothing the page holds is file text.
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');
    expect(await page.content()).not.toContain(PLANTED);

    expect(problems).toEqual([]);

    // The daemon stops: the page says so. It starts again on the same port: the page is live again.
    await daemon.stop();
    await expect.poll(() => text(page, '#conn')).toMatch(/^Disconnected: the daemon is not answering/);
    expect(await page.locator('#conn').getAttribute('data-state')).toBe('down');
    await start(project, ['--port', String(daemon.port)]);
    await expect.poll(() => text(page, '#conn'), { timeout: 15_000 }).toBe('Live');
    expect(await page.evaluate('window.samePage')).toBe(true);
    // The stream cut off shows as a failed load of it (a 404 when it reconnects while the project
    // is detached or not yet attached): the only error, and no CSP violation.
    expect(
      problems.filter(
        (p) => !/^Failed to load resource: (net::|the server responded with a status of 404)/.test(p),
      ),
    ).toEqual([]);
    // The page, its stream, and the steer forms' current text.
    expect(new Set(requests)).toEqual(new Set(['/', '/status/stream', '/steer']));
  }, 90_000);
});
