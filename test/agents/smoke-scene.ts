import { execFileSync } from 'node:child_process';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startDaemon, tempProject } from '../support/daemon.js';
import type { trackStarted } from '../support/started.js';
import type { ToolCall } from './chat-model.js';

// What the Copilot and opencode smoke tests share: the project they run in, the tool calls of
// their scripts, and the fixture files their captures are checked against.

/** A git project (the agents take the git root as the project) with a README, served by a real `pulse start`. */
export const gitProjectWithDaemon = async (started: ReturnType<typeof trackStarted>, prefix: string) => {
  const project = await realpath(await tempProject(prefix));
  started.projects.push(project);
  execFileSync('git', ['init', '-q', project]);
  await writeFile(join(project, 'README.md'), 'hello world\n');
  const daemon = await startDaemon(project);
  started.daemons.push(daemon);
  return { project, daemon };
};

/** A tool call of a script step, with the id the test reads its result by. */
export const toolCall = (name: string, args: Record<string, unknown>, id: string): ToolCall => ({
  name,
  arguments: args,
  id,
});

/**
 * A captured value's fixture `dir/name.json`: with PULSE_WRITE_FIXTURES=1 it is (re)written from
 * `value` and `value` comes back; otherwise the kept fixture comes back, for the test to compare.
 */
export const fixtureFile = async (dir: string, name: string, value: unknown): Promise<unknown> => {
  const file = join(dir, `${name}.json`);
  if (process.env.PULSE_WRITE_FIXTURES !== '1') return JSON.parse(await readFile(file, 'utf8'));
  await mkdir(dir, { recursive: true });
  await writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
  return value;
};
