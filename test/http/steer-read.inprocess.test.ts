import { rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEER_TOKEN_HEADER } from '../../src/http/auth.js';
import { PLANTED_SECRET } from '../support/planted-secret.js';
import { type InProcessApp, inProcessApp } from './in-process-app.js';

/*
 * The status page reads guidance.md and constraints.md to edit them (GET /steer): through the
 * shared reader, so a guidance.md linking out of the project is refused, its target never sent.
 */

describe('the steer route reading guidance for the page', () => {
  let served: InProcessApp;
  beforeAll(async () => {
    served = await inProcessApp({}, async (project) => {
      const secret = `${project}-id_rsa`;
      await writeFile(secret, `${PLANTED_SECRET}\n`);
      await rm(join(project, '.pulse', 'guidance.md'));
      await symlink(secret, join(project, '.pulse', 'guidance.md'));
    });
  });
  afterAll(async () => {
    await rm(`${served.project}-id_rsa`, { force: true });
    await served.stop();
  });

  const read = async (file: string) => {
    const page = await (await served.request('/')).text();
    const steerToken = /name="pulse-steer-token" content="([^"]+)"/.exec(page)![1]!;
    return served.request(`/steer?file=${file}`, {
      headers: { origin: 'http://localhost', [STEER_TOKEN_HEADER]: steerToken },
    });
  };

  it('refuses a symlinked guidance.md with the fix and never sends its target, while constraints.md reads', async () => {
    const refused = await read('guidance');
    const text = await refused.text();
    expect(refused.status).toBe(409);
    expect(JSON.parse(text)).toEqual({
      error:
        '.pulse/guidance.md cannot be read: is a symlink, and pulse never reads through symlinks: replace it with a regular file',
    });
    expect(text).not.toContain(PLANTED_SECRET);
    const constraints = await read('constraints');
    expect(constraints.status).toBe(200);
    expect(((await constraints.json()) as { text: string }).text).toMatch(/^# Constraints/);
  });
});
