// What a source may send to get at a terminal, and the check that none of it got through.

/**
 * A title as a hostile source could list it: clear screen, window title, clipboard write (OSC 52),
 * an 8-bit CSI, NUL and BEL around readable words. A terminal should show `HOSTILE_TITLE_SHOWN`.
 */
export const HOSTILE_TITLE =
  'Standup\x1b[2J moved\x1b]0;pwned\x07 to 10:00\x1b]52;c;cHduZWQ=\x07\x9b31m!\x00\x07';

/** What is left of `HOSTILE_TITLE` to read. */
export const HOSTILE_TITLE_SHOWN = 'Standup moved to 10:00!';

/** The C0 and C1 control characters (DEL included) of `text` other than line feeds, as code points. */
export const controlsIn = (text: string): number[] =>
  [...text]
    .map((char) => char.codePointAt(0)!)
    .filter((code) => (code < 0x20 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f));
