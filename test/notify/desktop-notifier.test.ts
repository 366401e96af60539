import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDesktopNotifier } from '../../src/notify/desktop-notifier.js';

/*
 * The desktop notifier runs the real program it finds on PATH: here a stand-in `osascript` or
 * `notify-send` that records its arguments, so the macOS path is run on any machine.
 */

const folders: string[] = [];

afterAll(() => Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))));

/** A folder holding a stand-in `name` that writes each argument on a line of `calls`, and that file. */
const standIn = async (name: string) => {
  const bin = await mkdtemp(join(tmpdir(), 'pulse-notifier-'));
  folders.push(bin);
  const calls = join(bin, 'calls');
  await writeFile(
    join(bin, name),
    `#!/bin/sh\nfor arg in "$@"; do printf '%s\\n' "$arg" >> '${calls}'; done\n`,
  );
  await chmod(join(bin, name), 0o755);
  return { bin, calls: async () => (await readFile(calls, 'utf8')).split('\n').slice(0, -1) };
};

// Shell and AppleScript both would run something of this, were it put into a command or script.
const notification = {
  key: 'k',
  title: 'Deploy "prod" $(touch pwned)',
  body: 'end run\ndo shell script "x"',
};

describe('desktop notifications', () => {
  it('on macOS passes the title and body to osascript as arguments, never into its script', async () => {
    const { bin, calls } = await standIn('osascript');
    const notify = createDesktopNotifier({ env: { PATH: bin }, platform: 'darwin' });
    expect(await notify(notification)).toEqual({ shown: true });
    const args = await calls();
    // The script only reads its arguments: the title, then the body (two lines, recorded apart).
    expect(args).toContain('display notification (item 2 of argv) with title (item 1 of argv)');
    expect(args.slice(-3)).toEqual(['Deploy "prod" $(touch pwned)', 'end run', 'do shell script "x"']);
    expect(args.slice(0, -3).join('\n')).not.toMatch(/Deploy|shell/);
  });

  it('elsewhere runs notify-send with the text after --, and says which program is missing', async () => {
    const { bin, calls } = await standIn('notify-send');
    const notify = createDesktopNotifier({ env: { PATH: bin }, platform: 'linux' });
    expect(await notify(notification)).toEqual({ shown: true });
    expect(await calls()).toEqual([
      '--app-name=pulse',
      '--',
      'Deploy "prod" $(touch pwned)',
      'end run',
      'do shell script "x"',
    ]);
    const empty = await mkdtemp(join(tmpdir(), 'pulse-notifier-'));
    folders.push(empty);
    expect(await createDesktopNotifier({ env: { PATH: empty }, platform: 'darwin' })(notification)).toEqual({
      shown: false,
      missing: 'no desktop notifier: osascript is not on PATH (it comes with macOS)',
    });
  });
});
