import { mkdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, needBrowser } from '../support/browser.js';
import { runCli, startDaemon, tempProject } from '../support/daemon.js';
import { save } from '../support/files.js';
import { trackStarted } from '../support/started.js';

/*
 * A real Chromium page served from another loopback port (the pages a dev server shows) tries
 * every route of a daemon with default settings, the ways a page can without the user: no-cors
 * text/plain POSTs (no preflight), JSON POSTs, an EventSource, an image and a script, a form.
 * Each is refused, and nothing changes; a link from that page still opens pulse's own page.
 */

const started = trackStarted();

/** A page's origin that is not pulse's: a tiny server on another loopback port. */
const otherPage = async (): Promise<{ server: Server; port: number }> => {
  const server = createServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><title>elsewhere</title><p>hi</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
};

/** What the page tries, run in the page: each route, each way; resolves when all have settled. */
const attack = async ({ daemon, project, id }: { daemon: string; project: string; id: string }) => {
  const hook = JSON.stringify({
    session_id: 'page-agent',
    cwd: project,
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'ls' },
  });
  const bodies: [string, string][] = [
    [`/hook/claude/PreToolUse?project=${encodeURIComponent(project)}`, hook],
    ['/sources/test', JSON.stringify({ source: 'cal' })],
    [`/p/${id}/steer`, JSON.stringify({ file: 'guidance', text: 'From a page.' })],
    ['/projects', JSON.stringify({ project: '/tmp' })],
    [
      `/p/${id}/mcp`,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'pulse_ack_replan', arguments: { event_id: 'evt-x', agent: 'page-agent' } },
      }),
    ],
  ];
  const settle = (p: Promise<unknown>) =>
    p.then(
      () => 'answered',
      () => 'failed',
    );
  const tries: Promise<string>[] = [];
  for (const [path, body] of bodies) {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      tries.push(
        settle(
          fetch(daemon + path, { method: 'POST', mode: 'no-cors', headers: { 'content-type': type }, body }),
        ),
      );
    }
    tries.push(
      settle(fetch(daemon + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body })),
    );
  }
  for (const path of ['/status', `/p/${id}/status`, '/healthz', '/steer?file=guidance', '/']) {
    tries.push(settle(fetch(daemon + path, { mode: 'no-cors' })));
    tries.push(settle(fetch(daemon + path)));
    tries.push(
      new Promise((resolve) => {
        const img = document.createElement('img');
        img.onload = () => resolve('loaded');
        img.onerror = () => resolve('failed');
        img.src = `${daemon + path}${path.includes('?') ? '&' : '?'}img`;
        document.body.append(img);
      }),
    );
    tries.push(
      new Promise((resolve) => {
        const script = document.createElement('script');
        script.onload = () => resolve('loaded');
        script.onerror = () => resolve('failed');
        script.src = `${daemon + path}${path.includes('?') ? '&' : '?'}script`;
        document.body.append(script);
      }),
    );
  }
  for (const path of ['/status/stream', `/p/${id}/status/stream`]) {
    tries.push(
      new Promise((resolve) => {
        const source = new EventSource(daemon + path);
        source.onopen = () => {
          source.close();
          resolve('opened');
        };
        source.onerror = () => {
          source.close();
          resolve('failed');
        };
      }),
    );
  }
  // A form posted into a frame: a navigation, which sends no preflight either.
  tries.push(
    new Promise((resolve) => {
      const frame = document.createElement('iframe');
      frame.name = 'sink';
      frame.onload = () => resolve('posted');
      document.body.append(frame);
      const form = document.createElement('form');
      form.method = 'POST';
      form.enctype = 'text/plain';
      form.target = 'sink';
      form.action = `${daemon}/hook/claude/PreToolUse?project=${encodeURIComponent(project)}`;
      const field = document.createElement('input');
      field.name = hook.slice(0, -1);
      field.value = '}';
      form.append(field);
      document.body.append(form);
      form.submit();
    }),
  );
  return Promise.all(tries);
};

describe('a page on another loopback port', () => {
  let browser: Browser;
  let project: string;
  let port: number;
  let id: string;
  let pagePort: number;
  beforeAll(async () => {
    project = await tempProject('pulse-browser-');
    started.projects.push(project);
    await mkdir(join(project, '.pulse'));
    await save(join(project, '.pulse', 'guidance.md'), '# Guidance\n\nKeep going.\n');
    const daemon = await startDaemon(project);
    started.daemons.push(daemon);
    port = daemon.port;
    id = /\/p\/([^/]+)\/mcp$/.exec(daemon.url)![1]!;
    const page = await otherPage();
    started.servers.push(page.server);
    pagePort = page.port;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await started.cleanUp();
  });

  it('is refused on every route, however it asks, and changes nothing', async (context) => {
    needBrowser(context);
    browser = await launchChromium();
    const before = {
      guidance: await readFile(join(project, '.pulse', 'guidance.md')),
      events: await readFile(join(project, '.pulse', 'events.jsonl')),
    };
    // Each pair is cross-site (localhost → 127.0.0.1) or same-site (another port of one host).
    for (const [pageHost, daemonHost] of [
      ['localhost', '127.0.0.1'],
      ['127.0.0.1', '127.0.0.1'],
      ['localhost', 'localhost'],
    ]) {
      const page = await browser.newPage();
      const answers: { url: string; status: number; method: string }[] = [];
      page.on('response', (response) => {
        const url = new URL(response.url());
        if (url.port === String(port))
          answers.push({ url: url.pathname, status: response.status(), method: response.request().method() });
      });
      await page.goto(`http://${pageHost}:${pagePort}/`);
      const outcomes = await page.evaluate(attack, { daemon: `http://${daemonHost}:${port}`, project, id });
      expect(outcomes).not.toContain('loaded');
      expect(outcomes).not.toContain('opened');
      const reached = answers.filter((a) => a.status < 400);
      expect(reached, `${pageHost} → ${daemonHost}`).toEqual([]);
      // The no-cors POSTs did reach the daemon, and it said no.
      expect(answers.filter((a) => a.method === 'POST').length).toBeGreaterThan(5);
      await page.close();
    }

    expect(await readFile(join(project, '.pulse', 'guidance.md'))).toEqual(before.guidance);
    expect(await readFile(join(project, '.pulse', 'events.jsonl'))).toEqual(before.events);
    const status = JSON.parse((await runCli(['status', '-p', project, '--json'])).stdout);
    const agents = JSON.stringify(status);
    expect(agents, 'no agent the page made up').not.toContain('page-agent');
    const projects = (await (await fetch(`http://127.0.0.1:${port}/projects`)).json()) as {
      projects: { root: string }[];
    };
    expect(projects.projects.map((p) => p.root)).toEqual([project]);
  }, 90_000);

  it('may still open pulse’s own page through a link, which then works', async (context) => {
    needBrowser(context);
    browser ??= await launchChromium();
    const page = await browser.newPage();
    await page.goto(`http://localhost:${pagePort}/`);
    await page.evaluate((href) => {
      const link = document.createElement('a');
      link.href = href;
      link.textContent = 'pulse';
      link.id = 'to-pulse';
      document.body.append(link);
    }, `http://127.0.0.1:${port}/p/${id}/`);
    const [response] = await Promise.all([page.waitForNavigation(), page.click('#to-pulse')]);
    expect(response?.status()).toBe(200);
    // Its own stream connects from there (same origin now).
    const streamed = await page.evaluate(
      (url) =>
        new Promise<string>((resolve) => {
          const source = new EventSource(url);
          source.onopen = () => {
            source.close();
            resolve('opened');
          };
          source.onerror = () => resolve('failed');
        }),
      'status/stream',
    );
    expect(streamed).toBe('opened');
    await page.close();
  }, 60_000);
});
