import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = resolve('scripts/commit-subjects.mjs');
let repo: string;

const git = (...args: string[]) =>
  execFileSync('git', args, {
    cwd: repo,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  }).trim();

const commit = (subject: string) => git('commit', '--allow-empty', '-q', '-m', subject);
const check = (since: string) => spawnSync('node', [script, since], { cwd: repo, encoding: 'utf8' });

/** A repository whose main line has short subjects and merges a helper's branch with `helperSubject`. */
const repoWithMergedBranch = async (helperSubject: string): Promise<string> => {
  repo = await mkdtemp(join(tmpdir(), 'pulse-subjects-'));
  git('init', '-q', '-b', 'main');
  commit('Begin the rule');
  const since = git('rev-parse', 'HEAD');
  git('checkout', '-q', '-b', 'helper');
  commit(helperSubject);
  git('checkout', '-q', 'main');
  commit('Move on the main line');
  git('merge', '-q', '--no-ff', '-m', 'Merge the helper', 'helper');
  return since;
};

afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

describe('the commit-subject check', () => {
  it("fails on a merged helper branch's own commit whose subject runs past 72 characters", async () => {
    const long = `Say ${'x'.repeat(75)}`;
    const since = await repoWithMergedBranch(long);
    const run = check(since);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`subject is ${long.length} characters (at most 72): ${long}`);
  });

  it('passes when every subject since the rule began, merged ones included, is short', async () => {
    const since = await repoWithMergedBranch('Keep a short subject on the helper branch');
    const run = check(since);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('at most 72 characters');
  });
});
