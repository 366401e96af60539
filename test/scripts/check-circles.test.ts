import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const script = resolve('scripts/check-circles.mjs');
let repo: string;

/** Writes each file of a small tree into the temp repository. */
const tree = async (files: Record<string, string>) => {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), text);
  }
};
const check = () => spawnSync('node', [script], { cwd: repo, encoding: 'utf8' });

/** A tree that keeps every rule: a machine, a store file under it, a command over both. */
const clean = {
  'tsconfig.json': '{ "compilerOptions": { "module": "NodeNext", "moduleResolution": "NodeNext" } }\n',
  'machines/gate.ts': 'export const gate = 1;\n',
  'src/store/paths.ts': "import { gate } from '../../machines/gate.js';\nexport const paths = gate;\n",
  'src/commands/start.ts': "import { paths } from '../store/paths.js';\nexport const start = paths;\n",
  'harness/clock.ts': "import { gate } from '../machines/gate.js';\nexport const clock = gate;\n",
  'test/support/files.ts': "import { clock } from '../../harness/clock.js';\nexport const files = clock;\n",
};

beforeEach(async () => {
  repo = await mkdtemp(join(tmpdir(), 'pulse-circles-'));
});
afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

describe('the import check (npm run lint)', () => {
  it('passes a tree whose imports point down and close no circle', async () => {
    await tree(clean);
    const run = check();
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/no circle in machines\/ or src\//);
  });

  it('fails on a circle in src/, a type import included, naming each file of it', async () => {
    await tree({
      ...clean,
      'src/hooks/decide.ts':
        "import type { Phase } from './dialect.js';\nexport interface Verdict { p?: Phase }\n",
      'src/hooks/dialect.ts':
        "import type { Verdict } from './decide.js';\nexport type Phase = Verdict | 'stop';\n",
    });
    const run = check();
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      'circle: src/hooks/dialect.ts -> src/hooks/decide.ts -> src/hooks/dialect.ts',
    );
  });

  it('fails on an import it cannot resolve rather than passing blind', async () => {
    await tree({
      ...clean,
      'src/store/lost.ts': "import { gone } from './gone.js';\nexport const lost = gone;\n",
    });
    const run = check();
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('src/store/lost.ts imports ./gone.js, which does not resolve');
  });

  it('fails on a circle in machines/', async () => {
    await tree({
      ...clean,
      'machines/inbox.ts': "import { rule } from './inbox-decisions.js';\nexport const inbox = rule;\n",
      'machines/inbox-decisions.ts':
        "import type { inbox } from './inbox.js';\nexport const rule = 1 as typeof inbox;\n",
    });
    const run = check();
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/circle: machines\/inbox(-decisions)?\.ts -> machines\/inbox/);
  });

  it('fails on an import that runs up the layers, naming both files and layers', async () => {
    await tree({
      ...clean,
      'src/daemon/daemon.ts': 'export interface StartFacts { port: number }\n',
      'src/log/start-summary.ts':
        "import type { StartFacts } from '../daemon/daemon.js';\nexport type S = StartFacts;\n",
    });
    const run = check();
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      'src/log/start-summary.ts in layer 3 (src/log/, src/store/) imports src/daemon/daemon.ts in layer 8 (src/daemon/): imports point down',
    );
  });

  it('fails when harness/, bench/ or src/ import test/, but lets test/ import harness/', async () => {
    await tree({
      ...clean,
      'bench/run.ts': "import { files } from '../test/support/files.js';\nexport const run = files;\n",
      'harness/pipeline.ts': "import { files } from '../test/support/files.js';\nexport const p = files;\n",
    });
    const run = check();
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('bench/run.ts imports test/support/files.ts');
    expect(run.stderr).toContain('harness/pipeline.ts imports test/support/files.ts');
    expect(run.stderr).not.toContain('test/support/files.ts imports');
  });
});
