import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createWebSocketReceiver } from '@statelyai/inspect';
import { afterEach, describe, expect, it } from 'vitest';
import { openStatusStream } from '../http/sse-reader.js';
import { callTool, connectClient, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { PLANTED_SECRET, plantSecretSources } from '../support/planted-secret.js';
import { trackStarted } from '../support/started.js';

/*
 * A secret planted in the environment and handed to source servers (bearer token, header, a
 * stdio server's env, which that server prints to stderr) reaches none of the places a user, an
 * agent or a browser can read: every one is gathered after a poll, a failure and a delivery.
 */

const started = trackStarted();

afterEach(started.cleanUp);

interface Answer {
  needs_attention: boolean;
  delivery_id: string | null;
}

describe('a secret from the environment', () => {
  it('never reaches the log, the terminal, /status, its stream, the page, the context, the CLI, the hooks or the inspector', async () => {
    const project = await tempProject('pulse-secrets-');
    const fixtureDir = await tempProject('pulse-secrets-fixture-');
    started.projects.push(project, fixtureDir);
    await mkdir(join(project, '.pulse'));
    const { mail, env } = await plantSecretSources(project, {
      fixtureDir,
      track: (child) => started.children.push(child),
    });
    const daemon = await startDaemon(project, {
      args: ['--log-level', 'trace', '--inspect', '--inspect-port', '0'],
      env,
    });
    started.daemons.push(daemon);
    const inspectUrl = /Inspector: (http:\/\/\S+) /.exec(daemon.output())![1]!;
    const inspected: string[] = [];
    createWebSocketReceiver({ server: inspectUrl.replace('http', 'ws') }).subscribe((event) => {
      inspected.push(JSON.stringify(event));
    });
    const stream = await openStatusStream(new URL('/status/stream', daemon.url).href);
    started.streams.push(stream);
    const client = await connectClient(daemon.url);
    started.clients.push(client);

    // The secret was live: the server got it, and the leaky server's stderr and failure were seen.
    await waitUntil(async () => (await mail.calls()).length > 0, { describe: () => 'a call to mail' });
    expect((await mail.calls())[0]!.headers?.['x-key']).toBe(PLANTED_SECRET);
    await stream.next((s) => s.sources.pollers.some((p) => p.source === 'leaky' && p.last_error !== null));
    await waitUntil(() => daemon.output().includes('token is ***'), { describe: () => 'the stderr line' });

    // A delivery waiting for an agent, which the hook announces, then out to the agent.
    await stream.next((s) => s.gate.delivery !== null, 15_000);
    const hookInput = JSON.stringify({
      session_id: 'secret-check',
      cwd: project,
      hook_event_name: 'UserPromptSubmit',
      prompt: 'go on',
    });
    const hook = await runCli(['hook', 'claude', '-p', project], { input: hookInput });
    expect(hook.stdout, 'the hook announced the delivery').toContain('hello');
    const delivery = await callTool<Answer>(client, 'pulse_should_interrupt', {});
    expect(delivery.needs_attention).toBe(true);
    const context = await client.readResource({ uri: 'pulse://context/latest' });
    const contextText = (context.contents[0] as { text: string }).text;
    expect(contextText).toContain('"hello"');
    const statusJson = await (await fetch(new URL('/status', daemon.url))).text();
    expect(statusJson).toContain('"last_error"');
    const page = await (await fetch(new URL('/', daemon.url))).text();
    const statusCli = await runCli(['status', '-p', project, '--json']);
    expect(JSON.parse(statusCli.stdout).daemon.running).toBe(true);
    const sourcesCli = await runCli(['sources', 'list', '-p', project, '--json']);
    expect(JSON.parse(sourcesCli.stdout).pollers).toHaveLength(2);
    const acked = await callTool<{ accepted: boolean }>(client, 'pulse_ack_events', {
      delivery_id: delivery.delivery_id,
    });
    expect(acked.accepted).toBe(true);
    await waitUntil(() => inspected.some((e) => e.includes('gate.ack')), {
      describe: () => 'the ack inspected',
    });
    expect(await daemon.stop()).toBe(0);

    const surfaces: Record<string, string> = {
      'pulse.log': await readFile(join(project, '.pulse', 'pulse.log'), 'utf8'),
      'daemon stdout and stderr': daemon.output(),
      '/status': statusJson,
      '/status/stream': stream.text(),
      'the status page': page,
      'the context resource': contextText,
      'pulse status --json': statusCli.stdout + statusCli.stderr,
      'pulse sources list --json': sourcesCli.stdout + sourcesCli.stderr,
      'the hook answer': hook.stdout + hook.stderr,
      'the inspector stream': inspected.join('\n'),
    };
    for (const [where, text] of Object.entries(surfaces)) {
      expect(text.length, `${where} is not empty`).toBeGreaterThan(0);
      expect(text.includes(PLANTED_SECRET), `the secret in ${where}`).toBe(false);
    }
    expect(surfaces['pulse.log']).toContain('token is ***');
  }, 60_000);
});
