#!/usr/bin/env node
// Checks commit subjects since the rule began: at most 72 characters, the why in the body.
// Every commit that landed counts, merged branches' own commits too: `git log` without
// --first-parent walks both parents of a merge.
import { execFileSync } from 'node:child_process';

/** The last commit before subjects were held to 72 characters (issue 27; a test names its own); older ones stay as written. */
const RULE_SINCE = process.argv[2] ?? 'b986de3';
const LIMIT = 72;

const git = (...args) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

let log;
try {
  git('rev-parse', '--verify', '--quiet', `${RULE_SINCE}^{commit}`);
  log = git('log', '--format=%h%x09%s', `${RULE_SINCE}..HEAD`);
} catch {
  console.log(
    'commit subjects: not checked (no git history here, e.g. an unpacked tarball or a shallow clone)',
  );
  process.exit(0);
}
const long = log
  .split('\n')
  .filter(Boolean)
  .map((line) => line.split('\t'))
  .filter(([, subject]) => subject.length > LIMIT);
for (const [hash, subject] of long)
  console.error(`${hash}: subject is ${subject.length} characters (at most ${LIMIT}): ${subject}`);
if (long.length > 0) {
  console.error('Reword with `git rebase -i` (reword): a short imperative subject, the why in the body.');
  process.exit(1);
}
console.log(`commit subjects: every one since ${RULE_SINCE} is at most ${LIMIT} characters`);
