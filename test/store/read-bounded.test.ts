import { execFileSync, spawn } from 'node:child_process';
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  readBoundedText,
  readJournal,
  refusalOf,
  UnreadableFileError,
} from '../../src/store/read-bounded.js';
import { FolderProblemError } from '../../src/store/real-folder.js';
import { removeProject, tempProject } from '../support/daemon.js';
import { PLANTED_SECRET } from '../support/planted-secret.js';

// The one reader every `.pulse/` file goes through: only a regular file named by the path itself.

let root: string;
let dir: string;
let secret: string;

beforeEach(async () => {
  root = await tempProject('pulse-read-bounded-');
  dir = join(root, 'project', '.pulse');
  await mkdir(dir, { recursive: true });
  secret = join(root, 'id_rsa');
  await writeFile(secret, `${PLANTED_SECRET}\n`);
});

afterEach(() => removeProject(root));

/** What a read of `path` threw, or the text it returned. */
const outcome = (path: string, limit = 1024) =>
  readBoundedText(path, limit).then(
    (text) => ({ text }),
    (error: unknown) => ({ error: error as Error }),
  );

const SYMLINK = 'is a symlink, and pulse never reads through symlinks: replace it with a regular file';

describe('readBounded', () => {
  it('reads a regular file, and answers null for a missing one', async () => {
    await writeFile(join(dir, 'task.md'), '# Task\n');
    expect(await readBoundedText(join(dir, 'task.md'), 1024)).toBe('# Task\n');
    expect(await readBoundedText(join(dir, 'plan.md'), 1024)).toBeNull();
  });

  it('refuses a symlink to a file outside the project, and one to a file beside it, reading neither', async () => {
    await symlink(secret, join(dir, 'task.md'));
    await writeFile(join(dir, 'plan.md'), 'a plan\n');
    await symlink('plan.md', join(dir, 'guidance.md'));
    for (const name of ['task.md', 'guidance.md']) {
      const read = await outcome(join(dir, name));
      expect(read).toEqual({ error: expect.any(UnreadableFileError) });
      expect((read as { error: UnreadableFileError }).error).toMatchObject({
        kind: 'symlink',
        message: SYMLINK,
      });
    }
  });

  it('refuses a dangling symlink and a symlink loop as symlinks, not as missing', async () => {
    await symlink(join(root, 'nowhere'), join(dir, 'task.md'));
    await symlink('plan.md', join(dir, 'plan.md'));
    for (const name of ['task.md', 'plan.md']) {
      expect((await outcome(join(dir, name))) as { error: Error }).toMatchObject({
        error: { message: SYMLINK },
      });
    }
  });

  it('refuses a FIFO at once, never waiting for a writer', async () => {
    execFileSync('mkfifo', [join(dir, 'focus.json')]);
    const started = performance.now();
    const read = (await outcome(join(dir, 'focus.json'))) as { error: UnreadableFileError };
    expect(read.error).toMatchObject({
      kind: 'not-regular',
      message: 'is a FIFO (named pipe), not a regular file: replace it with a regular file',
    });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('refuses a folder and a socket', async () => {
    await mkdir(join(dir, 'sources.json'));
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(dir, 'state.json'), resolve));
    try {
      expect(await outcome(join(dir, 'sources.json'))).toMatchObject({
        error: { message: 'is a folder, not a regular file: replace it with a regular file' },
      });
      expect(await outcome(join(dir, 'state.json'))).toMatchObject({
        error: { message: 'is a socket, not a regular file: replace it with a regular file' },
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a device node without opening it (where this user may make one)', async (context) => {
    try {
      execFileSync('mknod', [join(dir, 'plan.md'), 'c', '1', '5'], { stdio: 'ignore' });
    } catch {
      context.skip('mknod needs root (CAP_MKNOD)');
    }
    expect(await outcome(join(dir, 'plan.md'))).toMatchObject({
      error: { message: 'is a device, not a regular file: replace it with a regular file' },
    });
  });

  it('never reads the target of a symlink swapped in and out while it reads (no window between check and open)', async () => {
    const target = join(dir, 'task.md');
    await writeFile(target, 'plain\n');
    // Another process swaps a regular file and a link to the secret into place, as fast as it can.
    const swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs');
         const [target, secret] = process.argv.slice(1);
         fs.writeFileSync(target + '.plain', 'plain\\n');
         for (;;) {
           fs.symlinkSync(secret, target + '.link'); fs.renameSync(target + '.link', target);
           fs.linkSync(target + '.plain', target + '.file'); fs.renameSync(target + '.file', target);
         }`,
        target,
        secret,
      ],
      { stdio: 'ignore' },
    );
    try {
      const seen = { plain: 0, refused: 0, leaked: 0 };
      for (let read = 0; read < 3000; read++) {
        const text = await readBoundedText(target, 1024).catch(() => null);
        if (text === null) seen.refused++;
        else if (text.includes(PLANTED_SECRET)) seen.leaked++;
        else seen.plain++;
      }
      expect(seen.leaked, JSON.stringify(seen)).toBe(0);
      expect(seen.plain, 'some reads found the regular file').toBeGreaterThan(0);
    } finally {
      swapper.kill('SIGKILL');
    }
  });

  it('counts the bytes it reads, not the size a stat gives (a /proc file says 0)', async () => {
    expect(await outcome(`/proc/${process.pid}/pagemap`, 64 * 1024)).toMatchObject({
      error: { kind: 'too-large', message: 'holds more than the limit of 65536 (64 KiB): make it smaller' },
    });
  });

  it('reads nothing through a .pulse/ that is a symlink, nor through a project folder swapped for one', async () => {
    const elsewhere = join(root, 'elsewhere');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'task.md'), `${PLANTED_SECRET}\n`);
    await rm(dir, { recursive: true });
    await symlink(elsewhere, dir);
    const viaFolder = await outcome(join(dir, 'task.md'));
    expect((viaFolder as { error: Error }).error).toBeInstanceOf(FolderProblemError);
    expect((viaFolder as { error: Error }).error.message).toMatch(
      /^\.pulse\/ is a symlink to .*elsewhere: pulse never follows \.pulse\/ through a symlink/,
    );
    // The project folder swapped for a link to a folder holding a real .pulse/.
    await rm(dir);
    await mkdir(join(elsewhere, '.pulse'));
    await writeFile(join(elsewhere, '.pulse', 'task.md'), `${PLANTED_SECRET}\n`);
    const project = join(root, 'project');
    await rename(project, join(root, 'project-moved'));
    await symlink(elsewhere, project);
    const viaRoot = (await outcome(join(dir, 'task.md'))) as { error: Error };
    expect(viaRoot.error).toBeInstanceOf(FolderProblemError);
    expect(viaRoot.error.message).toBe(
      `.pulse/ is inside ${project}, which is a symlink now: pulse never follows the project folder through a symlink; put the real folder back, or start pulse on the folder it points to`,
    );
  });
});

describe('readJournal', () => {
  it("names pulse's own file it refuses, so a start error says which", async () => {
    await symlink(secret, join(dir, 'state.json'));
    await expect(readJournal(join(dir, 'state.json'))).rejects.toThrow(
      `${join(dir, 'state.json')} ${SYMLINK}`,
    );
  });
});

describe('refusalOf', () => {
  it('says by lstat alone what a read would refuse, and nothing for a regular or missing file', async () => {
    await symlink(secret, join(dir, 'events.jsonl'));
    execFileSync('mkfifo', [join(dir, 'inbox.jsonl')]);
    await writeFile(join(dir, 'state.json'), '{}\n');
    expect((await refusalOf(join(dir, 'events.jsonl')))?.message).toBe(SYMLINK);
    expect((await refusalOf(join(dir, 'inbox.jsonl')))?.kind).toBe('not-regular');
    expect(await refusalOf(join(dir, 'state.json'))).toBeNull();
    expect(await refusalOf(join(dir, 'seen.jsonl'))).toBeNull();
  });
});
