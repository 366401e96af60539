import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  FleetKeyError,
  fleetProjectKey,
  normaliseRemote,
  readFleetName,
} from '../../src/fleet/project-key.js';

const repo = (origin?: string) => {
  const root = mkdtempSync(join(tmpdir(), 'pulse-fleet-key-'));
  mkdirSync(join(root, '.pulse'));
  execFileSync('git', ['-C', root, 'init', '-q']);
  if (origin) execFileSync('git', ['-C', root, 'remote', 'add', 'origin', origin]);
  return root;
};

describe('the fleet project key', () => {
  it('is one key for the scp, https and ssh spellings of a remote, without credentials or port', () => {
    const keys = [
      'git@github.com:acme/widget.git',
      'https://github.com/acme/widget',
      'https://alice:s3cret@GitHub.com/acme/widget.git/',
      'ssh://git@github.com:22/acme/widget.git',
      'git://github.com/acme/widget',
    ].map(normaliseRemote);
    expect(new Set(keys)).toEqual(new Set(['git:github.com/acme/widget']));
    expect(keys.join()).not.toContain('s3cret');
  });

  it('keeps two repositories apart and refuses what is no remote', () => {
    expect(normaliseRemote('git@github.com:acme/other.git')).toBe('git:github.com/acme/other');
    expect(normaliseRemote('/srv/git/widget')).toBeNull();
    expect(normaliseRemote('file:///srv/git/widget')).toBeNull();
    expect(normaliseRemote('')).toBeNull();
  });

  it('comes from the git remote, and a project without one stays out saying how to name it', async () => {
    await expect(fleetProjectKey(repo('git@github.com:acme/widget.git'), [])).resolves.toBe(
      'git:github.com/acme/widget',
    );
    await expect(fleetProjectKey(repo(), [])).rejects.toThrow(/no git remote "origin".*--fleet-project/);
  });

  it('takes a name in .pulse/fleet-project only when the user allowed that name', async () => {
    const root = repo('git@github.com:acme/widget.git');
    writeFileSync(join(root, '.pulse', 'fleet-project'), 'team-b-payments\n');
    // A clone naming another team's project does not join it.
    await expect(fleetProjectKey(root, [])).rejects.toThrow(
      /names the fleet project "team-b-payments", which you did not allow.*--fleet-project team-b-payments/,
    );
    await expect(fleetProjectKey(root, ['team-b-payments'])).resolves.toBe('name:team-b-payments');
    // A name can never equal a remote's key.
    expect('name:team-b-payments').not.toMatch(/^git:/);
  });

  it('refuses a symlinked, oversized or malformed .pulse/fleet-project with the fix', async () => {
    const root = repo();
    const dir = join(root, '.pulse');
    symlinkSync('/etc/hostname', join(dir, 'fleet-project'));
    await expect(readFleetName(dir)).rejects.toThrow(/is a symlink/);
    for (const text of ['x'.repeat(300), 'Team B', '../../x', 'a\nb', '']) {
      const other = join(repo(), '.pulse');
      writeFileSync(join(other, 'fleet-project'), text);
      await expect(readFleetName(other)).rejects.toBeInstanceOf(FleetKeyError);
    }
  });
});
