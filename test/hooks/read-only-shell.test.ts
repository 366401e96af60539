import { describe, expect, it } from 'vitest';
import { isReadOnlyShell } from '../../src/hooks/read-only-shell.js';

describe('which shell commands run while a replan is pending', () => {
  it.each([
    'cat .pulse/guidance.md',
    'ls -la .pulse',
    'cat .pulse/guidance.md | head -20',
    'cd src && grep -rn "old API" . 2>/dev/null',
    'git status --short; git diff -- .pulse/guidance.md 2>&1 | tail -5',
    'git log --oneline -5',
    "grep 'a > b' notes.md",
    'grep "x|y" file && echo done',
    'find . -name "*.md" -newer .pulse/plan.md',
    '/usr/bin/head -n 5 README.md',
    'pulse status',
    'wc -l < .pulse/events.jsonl',
  ])('runs %s: it only reads', (command) => {
    expect(isReadOnlyShell(command)).toBe(true);
  });

  it.each([
    ['npm test', 'an unknown program'],
    ['cat .pulse/guidance.md > copy.md', 'output redirection'],
    ['echo plan >> .pulse/plan.md', 'appending'],
    ['ls && rm -rf build', 'a writer after a reader'],
    ['cat $(rm -rf x)', 'command substitution'],
    ['cat `touch x`', 'backticks'],
    ['echo "$(touch x)"', 'substitution inside double quotes'],
    ['diff <(ls) <(ls src)', 'process substitution'],
    ['find . -name "*.tmp" -delete', 'find -delete'],
    ['find . -exec rm {} ;', 'find -exec'],
    ['git commit -am wip', 'a git writer'],
    ['git diff --output=patch.diff', 'git writing a file'],
    ['rg --pre ./script pattern', 'rg running a preprocessor'],
    ['FOO=1 cat x', 'an environment prefix'],
    ['sudo cat /etc/shadow', 'sudo'],
    ['cat "unterminated', 'an unterminated quote'],
    ['sleep 100 & cat x', 'a background job of another program'],
    ['', 'nothing at all'],
  ])('holds %s (%s)', (command) => {
    expect(isReadOnlyShell(command)).toBe(false);
  });
});
