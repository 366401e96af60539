// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in sources.json is the config's own syntax.
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createWebSocketReceiver } from '@statelyai/inspect';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connectClient, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';

/*
 * The model thinker's API key, planted in the environment, goes to the model as a Bearer token
 * and nowhere else, even when the model server echoes it back in an error.
 */

const started = trackStarted();
const models: ModelServer[] = [];
afterEach(async () => {
  await started.cleanUp();
  await Promise.all(models.splice(0).map((m) => m.close()));
});

const KEY = 'sk-pl4nted-model-key-51f0';

describe("the model thinker's key", () => {
  it('reaches the model and none of the log, the terminal, /status, the context, the CLI or the inspector', async () => {
    const model = await startModelServer();
    models.push(model);
    model.script({
      kind: 'status',
      status: 401,
      body: JSON.stringify({ error: `Incorrect API key provided: ${KEY}` }),
    });
    const project = await tempProject('pulse-model-key-');
    started.projects.push(project);
    const cal = await fixtureFiles(project, 'cal', {
      items: [{ id: 'c-1', title: 'URGENT: standup moved' }],
    });
    await mkdir(join(project, '.pulse'), { recursive: true });
    await saveSources(
      project,
      JSON.stringify({
        mcpServers: { cal: fixtureCommand(cal.args) },
        sources: [{ name: 'cal', server: 'cal', tool: 'list_events', interval_sec: 300 }],
        reflection: {
          thinker: 'model',
          reflect_every_sec: 1,
          model: { base_url: model.baseUrl, model: 'm', api_key: '${PULSE_TEST_MODEL_KEY}' },
        },
      }),
    );
    const daemon = await startDaemon(project, {
      args: ['--log-level', 'trace', '--inspect', '--inspect-port', '0'],
      env: { PULSE_TEST_MODEL_KEY: KEY },
    });
    started.daemons.push(daemon);
    const inspectUrl = /Inspector: (http:\/\/\S+) /.exec(daemon.output())![1]!;
    const inspected: string[] = [];
    createWebSocketReceiver({ server: inspectUrl.replace('http', 'ws') }).subscribe((event) => {
      inspected.push(JSON.stringify(event));
    });
    const client = await connectClient(daemon.url);
    started.clients.push(client);

    // The first thought fails with the echoed key; the status then shows the error, redacted.
    await model.received(1);
    const failed = await waitUntil(async () => {
      const text = await (await fetch(new URL('/status', daemon.url))).text();
      return text.includes('Incorrect API key provided') && text;
    });
    expect(failed).toContain('Incorrect API key provided: ***');
    const delivery = await waitUntil(
      async () => {
        const answer = await callTool<{ needs_attention: boolean }>(client, 'pulse_should_interrupt', {});
        return answer.needs_attention && answer;
      },
      { timeoutMs: 15_000, intervalMs: 100, describe: () => 'the delivery after the retry' },
    );
    expect(delivery.needs_attention).toBe(true);
    expect(model.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
    const context = (
      (await client.readResource({ uri: 'pulse://context/latest' })).contents[0] as { text: string }
    ).text;
    const statusCli = await runCli(['status', '-p', project, '--json']);
    const sourcesCli = await runCli(['sources', 'list', '-p', project, '--json']);
    await waitUntil(() => inspected.some((e) => e.includes('Incorrect API key provided')), {
      describe: () => 'the failed thought inspected',
    });
    expect(await daemon.stop()).toBe(0);

    const surfaces: Record<string, string> = {
      'pulse.log': await readFile(join(project, '.pulse', 'pulse.log'), 'utf8'),
      'daemon stdout and stderr': daemon.output(),
      '/status': failed,
      'the context resource': context,
      'pulse status --json': statusCli.stdout + statusCli.stderr,
      'pulse sources list --json': sourcesCli.stdout + sourcesCli.stderr,
      'the inspector stream': inspected.join('\n'),
    };
    for (const [where, text] of Object.entries(surfaces)) {
      expect(text.length, `${where} is not empty`).toBeGreaterThan(0);
      expect(text.includes(KEY), `the key in ${where}`).toBe(false);
    }
    expect(surfaces['pulse.log']).toContain('Incorrect API key provided: ***');
  }, 60_000);
});
