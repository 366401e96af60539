import { describe, expect, it } from 'vitest';
import { terminalText } from '../../src/text/terminal-text.js';
import { controlsIn, HOSTILE_TITLE, HOSTILE_TITLE_SHOWN } from '../support/terminal.js';

describe('terminalText', () => {
  it.each([
    ['clear screen (CSI)', 'a\x1b[2Jb', 'ab'],
    ['colour with parameters (CSI)', '\x1b[1;31mred\x1b[0m', 'red'],
    ['8-bit CSI, payload and all', '\x9b31mred\x9b0m', 'red'],
    ['window title ended by BEL (OSC)', 'x\x1b]0;title\x07y', 'xy'],
    ['window title ended by ST (OSC)', 'x\x1b]2;title\x1b\\y', 'xy'],
    ['clipboard write (OSC 52)', 'c\x1b]52;c;aGVsbG8+Lw==\x07d', 'cd'],
    ['hyperlink, keeping its text (OSC 8)', '\x1b]8;;http://x.test\x1b\\link\x1b]8;;\x1b\\', 'link'],
    ['8-bit OSC ended by 8-bit ST', 'a\x9d0;title\x9cb', 'ab'],
    ['device control string (DCS)', 'a\x1bP1$r0m\x1b\\b', 'ab'],
    ['an OSC never ended swallows the rest, as a terminal would', 'Meeting \x1b]0;evil and more', 'Meeting '],
    ['reset and charset escapes', 'a\x1bcb\x1b(Bc', 'abc'],
    ['NUL, BEL, backspace, DEL and a lone ESC', 'n\x00u\x07l\x08l\x7f\x1b', 'null'],
    ['C1 controls such as NEL', 'a\x85b', 'ab'],
  ])('removes %s', (_what, text, shown) => {
    expect(terminalText(text)).toBe(shown);
  });

  it('turns tabs and line breaks into spaces, so a title cannot forge a line of its own', () => {
    expect(terminalText('a\tb\r\nreplan:    nothing pending\rc\nd')).toBe(
      'a b replan:    nothing pending c d',
    );
  });

  it('keeps printable Unicode as it is', () => {
    const text = 'Réunion 日本 🎉 — «ok» ✓ \u00a0';
    expect(terminalText(text)).toBe(text);
  });

  it('leaves the readable part of a hostile title and no control character', () => {
    expect(terminalText(HOSTILE_TITLE)).toBe(HOSTILE_TITLE_SHOWN);
    expect(controlsIn(terminalText(HOSTILE_TITLE))).toEqual([]);
  });
});
