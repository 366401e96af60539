import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/commands/status.js';
import {
  callTool,
  type RunningDaemon,
  removeProject,
  runCli,
  startDaemon,
  tempProject,
  waitForDelivery,
  waitUntil,
} from '../support/daemon.js';
import { startModelServer } from '../support/model-server.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { saveSources } from '../support/trust.js';

/*
 * `pulse status` lists the agents connected to a real daemon: one line per MCP session of a real
 * SDK client, by the name it gives in its tool calls and the client name from its `initialize`,
 * which is third-party text and reaches the terminal stripped of escape sequences.
 */

const projects: string[] = [];
const daemons: RunningDaemon[] = [];
const transports: StreamableHTTPClientTransport[] = [];

afterEach(async () => {
  await Promise.allSettled(transports.splice(0).map((transport) => transport.close()));
  await Promise.all(daemons.splice(0).map((daemon) => daemon.stop().then(() => daemon.kill9())));
  await Promise.all(projects.splice(0).map(removeProject));
});

/** A project with one source whose two items make a delivery for the first agent that checks in. */
const projectWithSource = async () => {
  const dir = await tempProject('pulse-status-');
  projects.push(dir);
  await mkdir(join(dir, '.pulse'));
  const cal = await fixtureFiles(dir, 'cal', {
    items: [
      { id: 'cal-1', title: 'Budget review moved' },
      { id: 'cal-2', title: 'Standup moved to 10:30' },
    ],
  });
  await saveSources(
    dir,
    JSON.stringify({
      mcpServers: { cal: fixtureCommand(cal.args) },
      sources: [{ name: 'cal', server: 'cal', tool: 'list_events', args: {}, interval_sec: 300 }],
    }),
  );
  return dir;
};

/** A client whose `initialize` names it with a terminal escape that would clear the screen. */
const HOSTILE_CLIENT = 'evil\u001b[2J\u001b]0;pwned\u0007-client';

const connect = async (url: string) => {
  const client = new Client({ name: HOSTILE_CLIENT, version: '4.5.6' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  transports.push(transport);
  await client.connect(transport);
  return { client, transport };
};

const status = async (dir: string) => {
  const { code, stdout } = await runCli(['status', '--project', dir]);
  expect(code).toBe(0);
  return stdout;
};

const statusJson = async (dir: string): Promise<StatusReport> => {
  const { code, stdout } = await runCli(['status', '--project', dir, '--json']);
  expect(code).toBe(0);
  return JSON.parse(stdout) as StatusReport;
};

const agentLines = (text: string) => text.split('\n').filter((line) => /^agents?:/.test(line));

describe('pulse status lists the connected agents', () => {
  it('one line per MCP session, with its name, client, last check-in and delivery, gone when the session ends', async () => {
    const dir = await projectWithSource();
    const daemon = await startDaemon(dir);
    daemons.push(daemon);
    expect(agentLines(await status(dir))).toEqual(['agents:    none connected over MCP']);

    const { client, transport } = await connect(daemon.url);
    // Connected, not yet named: the client as it introduced itself, its escapes gone.
    expect(agentLines(await status(dir))).toEqual([
      expect.stringMatching(
        /^agent: {5}evil-client 4\.5\.6 \(session [0-9a-f]{8}…\), last check-in \d+s ago$/,
      ),
    ]);

    // Once the gate sets a delivery aside, it checks in by name and takes the delivery out.
    await waitForDelivery(daemon);
    const answer = await callTool<{ needs_attention: boolean }>(client, 'pulse_should_interrupt', {
      agent: 'cli-test',
    });
    expect(answer.needs_attention).toBe(true);
    const report = await statusJson(dir);
    const delivery = report.gate!.delivery!.delivery_id;
    expect(delivery).toMatch(/^dlv_/);
    expect(report.agents).toEqual([
      expect.objectContaining({
        session: transport.sessionId,
        agent: 'cli-test',
        client_name: HOSTILE_CLIENT,
        client_version: '4.5.6',
        holds_delivery: delivery,
      }),
    ]);
    const text = await status(dir);
    expect(agentLines(text)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^agent: {5}evil-client 4\\.5\\.6 \\(session [0-9a-f]{8}…\\), named cli-test, last check-in \\d+s ago, holds delivery ${delivery}$`,
        ),
      ),
    ]);
    expect(text).not.toContain('\u001b');

    // The client leaves (DELETE /mcp): its line goes with it.
    await transport.terminateSession();
    expect(agentLines(await status(dir))).toEqual(['agents:    none connected over MCP']);
    expect((await statusJson(dir)).agents).toEqual([]);

    // Without a daemon, status knows of no agent and says nothing about them.
    await daemon.stop();
    const offline = await status(dir);
    expect(offline).toContain('not running');
    expect(agentLines(offline)).toEqual([]);
    expect((await statusJson(dir)).agents).toBeUndefined();
  }, 60_000);
});

describe('pulse status names the thinker in force', () => {
  it('says nobody judges while a failed model waits out its Retry-After, and when it is asked again', async () => {
    const model = await startModelServer({
      fallback: { kind: 'status', status: 503, headers: { 'retry-after': '600' } },
    });
    try {
      const dir = await tempProject('pulse-status-thinker-');
      projects.push(dir);
      await mkdir(join(dir, '.pulse'));
      const cal = await fixtureFiles(dir, 'cal', { items: [{ id: 'cal-1', title: 'Outage in eu-west' }] });
      await saveSources(
        dir,
        JSON.stringify({
          mcpServers: { cal: fixtureCommand(cal.args) },
          sources: [{ name: 'cal', server: 'cal', tool: 'list_events', args: {}, interval_sec: 300 }],
          reflection: { thinker: 'model', model: { base_url: model.baseUrl, model: 'triage' } },
        }),
      );
      const daemon = await startDaemon(dir);
      daemons.push(daemon);
      expect(thinkerLines(await status(dir))).toEqual(['thinker:   model triage']);

      await model.received(1);
      const report = await waitUntil(
        async () => {
          const r = await statusJson(dir);
          return r.gate?.state === 'backingOff' && r;
        },
        { describe: () => 'the gate backing off' },
      );
      // Retry-After: 600 is capped at 5 minutes.
      const retryAt = Date.parse(report.gate!.thinker.retry_at!);
      expect(retryAt - Date.now()).toBeGreaterThan(240_000);
      expect(retryAt - Date.now()).toBeLessThanOrEqual(300_000);
      const at = new Date(retryAt).toISOString().slice(11, 19);
      expect(report.gate!.thinker).toEqual({
        configured: 'model triage',
        judging: null,
        reason: `the model endpoint (triage) failed 1 time in a row (HTTP 503); it asked to be left alone (Retry-After), so it is asked again at ${at} UTC. Meanwhile nobody judges: the events wait in the inbox, each failed thought costing them an attempt (dead letters after 5).`,
        retry_at: new Date(retryAt).toISOString(),
      });
      expect(thinkerLines(await status(dir))).toEqual([
        `thinker:   model triage configured, nobody judging now: ${report.gate!.thinker.reason}`,
      ]);
    } finally {
      await model.close();
    }
  }, 60_000);
});

const thinkerLines = (text: string) => text.split('\n').filter((line) => line.startsWith('thinker:'));
