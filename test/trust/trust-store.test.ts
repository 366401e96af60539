import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isTrusted, recordTrust, revokeTrust, sourcesHash } from '../../src/trust/trust-store.js';

const NOBODY = 65534;
let base: string;
let env: NodeJS.ProcessEnv;
let project: string;
const trustedDir = () => join(base, 'state', 'pulse-agent', 'trusted');
const content = '{"mcpServers": {"cal": {"command": "sh", "args": ["-c", "touch marker"]}}}\n';

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'pulse-trust-'));
  env = { XDG_STATE_HOME: join(base, 'state') };
  project = join(base, 'project');
  mkdirSync(project);
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('the trust store', () => {
  it('trusts exactly the bytes recorded, in the project recorded, and nothing else', () => {
    const other = join(base, 'other');
    mkdirSync(other);
    expect(isTrusted(project, sourcesHash(content), env)).toBe(false);
    recordTrust(project, sourcesHash(content), env);
    expect(isTrusted(project, sourcesHash(content), env)).toBe(true);
    expect(isTrusted(project, sourcesHash(`${content} `), env), 'one byte more').toBe(false);
    expect(isTrusted(other, sourcesHash(content), env), 'another project').toBe(false);
  });

  it('keys a project by its real path: a symlink to it is the same project', () => {
    const link = join(base, 'link');
    symlinkSync(project, link);
    recordTrust(link, sourcesHash(content), env);
    expect(isTrusted(project, sourcesHash(content), env)).toBe(true);
  });

  it('writes each trust as one private file in the user state folder, so parallel trusts never share one', () => {
    const projects = Array.from({ length: 20 }, (_, i) => join(base, `p${i}`));
    for (const p of projects) mkdirSync(p);
    for (const p of projects) recordTrust(p, sourcesHash(content), env);
    const names = readdirSync(trustedDir());
    expect(names).toHaveLength(20);
    expect(names.every((name) => name.endsWith('.json'))).toBe(true);
    for (const p of projects) expect(isTrusted(p, sourcesHash(content), env)).toBe(true);
  });

  it('does not count a record that is a symlink to a real record', () => {
    const recorded = recordTrust(project, sourcesHash(content), env);
    const real = join(base, 'real.json');
    writeFileSync(real, readFileSync(recorded));
    rmSync(recorded);
    symlinkSync(real, recorded);
    expect(isTrusted(project, sourcesHash(content), env)).toBe(false);
  });

  it('does not count a record other users can write', () => {
    const recorded = recordTrust(project, sourcesHash(content), env);
    chmodSync(recorded, 0o666);
    expect(isTrusted(project, sourcesHash(content), env)).toBe(false);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'does not count a record, or a trust folder, that another user owns (needs root to chown)',
    () => {
      const recorded = recordTrust(project, sourcesHash(content), env);
      chownSync(recorded, NOBODY, NOBODY);
      expect(isTrusted(project, sourcesHash(content), env), 'record of nobody').toBe(false);
      chownSync(recorded, 0, 0);
      expect(isTrusted(project, sourcesHash(content), env)).toBe(true);
      chownSync(trustedDir(), NOBODY, NOBODY);
      expect(isTrusted(project, sourcesHash(content), env), 'folder of nobody').toBe(false);
      expect(() => recordTrust(project, sourcesHash(content), env)).toThrow(/belongs to uid 65534/);
    },
  );

  it('does not count a record whose content names another project or hash', () => {
    const recorded = recordTrust(project, sourcesHash(content), env);
    writeFileSync(recorded, JSON.stringify({ project: '/elsewhere', hash: sourcesHash(content) }), {
      mode: 0o600,
    });
    expect(isTrusted(project, sourcesHash(content), env)).toBe(false);
  });

  it('revokes every trust of one project, whatever its content, and keeps the others', () => {
    const other = join(base, 'other');
    mkdirSync(other);
    recordTrust(project, sourcesHash(content), env);
    recordTrust(project, sourcesHash('{}'), env);
    recordTrust(other, sourcesHash(content), env);
    expect(revokeTrust(project, env)).toBe(2);
    expect(isTrusted(project, sourcesHash(content), env)).toBe(false);
    expect(isTrusted(project, sourcesHash('{}'), env)).toBe(false);
    expect(isTrusted(other, sourcesHash(content), env)).toBe(true);
  });

  it('refuses to record something that is not a sources.json hash', () => {
    expect(() => recordTrust(project, 'sha256:abc', env)).toThrow(/sha256:<64 hex digits>/);
    expect(isTrusted(project, 'md5:abc', env)).toBe(false);
  });
});
