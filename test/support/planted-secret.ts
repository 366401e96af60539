// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in sources.json is the config's own syntax.
import type { ChildProcess } from 'node:child_process';
import { fixtureFiles, startHttpFixture } from './source-fixture.js';
import { saveSources } from './trust.js';

/** A secret the tests plant in the environment and then look for everywhere it must not be. */
export const PLANTED_SECRET = 'pl4nted-s3cret-value';

/**
 * Writes a `.pulse/sources.json` that hands `PULSE_TEST_SECRET` to source servers in every way a
 * config can: an HTTP fixture (`mail`, its files in `fixtureDir`) gets it as bearer token and as a
 * header; a stdio server (`leaky`) gets it in its env, prints it to stderr and fails. Returns the
 * mail fixture (its calls show the secret did arrive) and the env the daemon must run with.
 */
export const plantSecretSources = async (
  project: string,
  { fixtureDir = project, track }: { fixtureDir?: string; track: (child: ChildProcess) => void },
) => {
  const mail = await fixtureFiles(fixtureDir, 'mail', { items: [{ id: 'm-1', title: 'hello' }] });
  const mailUrl = await startHttpFixture(mail.args, track);
  const config = {
    mcpServers: {
      mail: {
        url: mailUrl,
        bearer_token: '${PULSE_TEST_SECRET}',
        headers: { 'X-Key': '${PULSE_TEST_SECRET}' },
      },
      // Prints its secret to stderr, then fails: both reach the daemon's diagnostics.
      leaky: {
        command: process.execPath,
        args: ['-e', "console.error('token is ' + process.env.LEAK); process.exit(2)"],
        env: { LEAK: '${PULSE_TEST_SECRET}' },
      },
    },
    sources: [
      { name: 'mail', server: 'mail', tool: 'list_messages', interval_sec: 1 },
      { name: 'leaky', server: 'leaky', tool: 'list_items', interval_sec: 1 },
    ],
  };
  await saveSources(project, JSON.stringify(config), fixtureDir);
  return { mail, env: { PULSE_TEST_SECRET: PLANTED_SECRET } };
};
