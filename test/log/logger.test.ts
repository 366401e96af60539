import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { removeProject, tempProject } from '../support/daemon.js';
import { controlsIn, HOSTILE_TITLE, HOSTILE_TITLE_SHOWN } from '../support/terminal.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeProject));
});

const logFile = async () => {
  const dir = await tempProject('pulse-logger-');
  dirs.push(dir);
  return join(dir, 'pulse.log');
};

const records = async (path: string) =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const capture = (isTTY = false) => {
  let text = '';
  return { terminal: { isTTY, write: (chunk: string) => (text += chunk) }, text: () => text };
};

describe('the daemon logger', () => {
  it('writes JSON lines with the level name, an ISO time, the message and the fields', async () => {
    const file = await logFile();
    const { terminal } = capture();
    const { logger, close } = createLogger({ level: 'info', file, terminal });
    logger.info({ event_id: 'evt_1', files: ['.pulse/guidance.md'] }, 'replan pending');
    logger.debug('not at info');
    close();
    const [line, ...rest] = await records(file);
    expect(rest).toEqual([]);
    expect(line).toMatchObject({
      level: 'info',
      msg: 'replan pending',
      event_id: 'evt_1',
      files: ['.pulse/guidance.md'],
      pid: process.pid,
    });
    expect(new Date(line!.time as string).toISOString()).toBe(line!.time);
  });

  it('prints the same records as readable lines, coloured only on a TTY', async () => {
    const plain = capture(false);
    const first = createLogger({ level: 'info', file: null, terminal: plain.terminal });
    first.logger.warn({ source: 'cal' }, 'source failing');
    first.close();
    expect(plain.text()).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] warning: source failing \{"source":"cal"\}\n$/);

    const tty = capture(true);
    const second = createLogger({ level: 'info', file: null, terminal: tty.terminal, colour: true });
    second.logger.warn('source failing');
    second.close();
    expect(tty.text()).toContain('\x1b[');
    expect(stripVTControlCharacters(tty.text())).toContain('warning: source failing');
  });

  it("prints no source's escape sequence or control character on the terminal, and writes the record exact to the file", async () => {
    const file = await logFile();
    const plain = capture(false);
    const secrets = () => ['s3cret'];
    const { logger, close } = createLogger({ level: 'info', file, terminal: plain.terminal, secrets });
    logger.info({ source_server: 'cal\x1b]0;pwned\x07' }, '\x1b]52;c;cHduZWQ=\x07noise\rfrom cal');
    logger.warn({ title: HOSTILE_TITLE, [`key${HOSTILE_TITLE}`]: [HOSTILE_TITLE] }, 'dead letter');
    // Cleaned, the two halves make the secret again.
    logger.info('token s3\x1b[1mcret');
    close();

    expect(controlsIn(plain.text())).toEqual([]);
    expect(plain.text()).toContain('info: noise from cal {"source_server":"cal"}');
    expect(plain.text()).toContain('info: token ***');
    expect(plain.text()).not.toContain('s3cret');
    expect(plain.text()).toContain(
      `"title":"${HOSTILE_TITLE_SHOWN}","key${HOSTILE_TITLE_SHOWN}":["${HOSTILE_TITLE_SHOWN}"]`,
    );
    const [first, second] = await records(file);
    expect(first).toMatchObject({
      msg: '\x1b]52;c;cHduZWQ=\x07noise\rfrom cal',
      source_server: 'cal\x1b]0;pwned\x07',
    });
    expect(second).toMatchObject({ title: HOSTILE_TITLE });

    // On a TTY, pulse's own colours stay; the source's sequences do not.
    const tty = capture(true);
    const coloured = createLogger({ level: 'info', file: null, terminal: tty.terminal, colour: true });
    coloured.logger.warn({ title: HOSTILE_TITLE }, 'dead letter');
    coloured.close();
    expect(tty.text()).toContain('\x1b[');
    expect(stripVTControlCharacters(tty.text())).toContain(`"title":"${HOSTILE_TITLE_SHOWN}"`);
    expect(tty.text()).not.toContain('\x1b]');
    expect(tty.text()).not.toContain('\x1b[2J');
  });

  it('writes no file and prints nothing when silent', async () => {
    const file = await logFile();
    const { terminal, text } = capture();
    const { logger, close, file: written } = createLogger({ level: 'silent', file, terminal });
    logger.fatal('nothing');
    close();
    expect(written).toBeNull();
    expect(text()).toBe('');
    await expect(access(file)).rejects.toThrow();
  });

  it('redacts every secret it ever saw from messages and fields, and the lines stay valid JSON', async () => {
    const file = await logFile();
    const { terminal, text } = capture();
    let secrets: string[] = ['tok"en-1', 'info'];
    const { logger, close } = createLogger({ level: 'info', file, terminal, secrets: () => secrets });
    logger.info({ header: 'Bearer tok"en-1', nested: { list: ['info'] } }, 'sent tok"en-1');
    // An edit of sources.json dropped that server: its token may still come out of its stderr.
    secrets = ['n3w-s3cret'];
    logger.warn({ server: 'old' }, 'last words: tok"en-1 and n3w-s3cret');
    close();
    const [first, second] = await records(file);
    expect(first).toMatchObject({
      level: 'info',
      msg: 'sent ***',
      header: 'Bearer ***',
      nested: { list: ['***'] },
    });
    expect(second).toMatchObject({ level: 'warn', msg: 'last words: *** and ***' });
    const everything = (await readFile(file, 'utf8')) + text();
    expect(everything).not.toContain('tok"en-1');
    expect(everything).not.toContain('tok\\"en-1');
    expect(everything).not.toContain('n3w-s3cret');
  });
});
