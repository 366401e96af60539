import { describe, expect, it } from 'vitest';
import type { EditOptions } from '../../src/setup/file-edit.js';
import { markdownBlockEdit } from '../../src/setup/markdown-block.js';

const options: EditOptions = { force: false, forceCommand: '' };
const edit = (text: string | null, body = 'Check pulse.') =>
  markdownBlockEdit(body, '---\nx: 1\n---\n\n')(text, options);
const BLOCK = '<!-- pulse:begin -->\nCheck pulse.\n<!-- pulse:end -->';

describe('the markdown block edit', () => {
  it('starts a new file with the preamble, and appends to a user file after a blank line', () => {
    expect(edit(null)).toEqual({ kind: 'write', text: `---\nx: 1\n---\n\n${BLOCK}\n` });
    expect(edit('Mine.')).toEqual({ kind: 'write', text: `Mine.\n\n${BLOCK}\n` });
    expect(edit('Mine.\n')).toEqual({ kind: 'write', text: `Mine.\n\n${BLOCK}\n` });
    expect(edit('Mine.\n\n\n')).toEqual({ kind: 'write', text: `Mine.\n\n\n${BLOCK}\n` });
    expect(edit('')).toEqual({ kind: 'write', text: `${BLOCK}\n` });
  });

  it('replaces only the text between the markers, and leaves an identical block alone', () => {
    const old = `Top.\n<!-- pulse:begin -->\nOld.\n<!-- pulse:end -->\nBottom.`;
    expect(edit(old)).toEqual({ kind: 'write', text: `Top.\n${BLOCK}\nBottom.` });
    expect(edit(`Top.\n${BLOCK}\nBottom.`)).toEqual({ kind: 'unchanged' });
  });

  it('refuses markers out of pairs', () => {
    for (const text of [
      'a <!-- pulse:begin --> b',
      '<!-- pulse:end --> <!-- pulse:begin -->',
      `${BLOCK}\n${BLOCK}`,
    ]) {
      expect(edit(text)).toMatchObject({ kind: 'invalid', problem: expect.stringContaining('out of pairs') });
    }
  });
});
