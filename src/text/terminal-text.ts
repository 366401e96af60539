// Text from sources (titles, names, their servers' stderr and errors) is printed to terminals,
// which obey what it holds: ECMA-48 escape sequences clear the screen, set the window title or
// write the clipboard (OSC 52). In their 7-bit (ESC …) and 8-bit (C1) forms, matched whole so
// that no payload is left behind: control strings (OSC, DCS, SOS, PM, APC) up to BEL or ST, or
// to the end when unterminated; CSI up to its final byte; any other ESC with its intermediates
// and final byte; then any C0 or C1 control left.
const ESCAPES = new RegExp(
  [
    '(?:\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d\\u009e\\u009f])[^\\u0007\\u001b\\u009c]*(?:\\u0007|\\u001b\\\\|\\u009c)?',
    '(?:\\u001b\\[|\\u009b)[\\u0030-\\u003f]*[\\u0020-\\u002f]*[\\u0040-\\u007e]?',
    '\\u001b[\\u0020-\\u002f]*[\\u0030-\\u007e]?',
    '[\\u0000-\\u0008\\u000e-\\u001f\\u007f-\\u009f]',
  ].join('|'),
  'g',
);
const SPACES = /\r\n|[\t\n\v\f\r]/g;

/**
 * Text as a terminal may safely print it on one line: escape sequences and control characters
 * removed, tabs and line breaks made spaces, printable Unicode kept.
 */
export const terminalText = (text: string): string => text.replace(ESCAPES, '').replace(SPACES, ' ');
