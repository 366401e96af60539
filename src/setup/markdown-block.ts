import type { FileEdit } from './file-edit.js';

export const BLOCK_BEGIN = '<!-- pulse:begin -->';
export const BLOCK_END = '<!-- pulse:end -->';

const count = (text: string, part: string) => text.split(part).length - 1;

/**
 * Our block of a markdown file, between the markers: replaced on a later run, appended after the
 * user's text the first time; nothing else in the file changes. `preamble` starts a new file
 * (a Cursor rule's front matter).
 */
export const markdownBlockEdit =
  (body: string, preamble = ''): FileEdit =>
  (current) => {
    const block = `${BLOCK_BEGIN}\n${body.trimEnd()}\n${BLOCK_END}`;
    if (current === null) return { kind: 'write', text: `${preamble}${block}\n` };
    const begin = current.indexOf(BLOCK_BEGIN);
    const end = current.indexOf(BLOCK_END);
    if (begin === -1 && end === -1) {
      // The user's text stays byte for byte; a blank line separates our block from it.
      const gap = current === '' || current.endsWith('\n\n') ? '' : current.endsWith('\n') ? '\n' : '\n\n';
      return { kind: 'write', text: `${current}${gap}${block}\n` };
    }
    if (count(current, BLOCK_BEGIN) !== 1 || count(current, BLOCK_END) !== 1 || end < begin) {
      return {
        kind: 'invalid',
        problem: `has ${BLOCK_BEGIN} and ${BLOCK_END} markers out of pairs`,
        fix: 'Leave one pair around the pulse block (or delete the markers and the block), then run this again.',
      };
    }
    const text = `${current.slice(0, begin)}${block}${current.slice(end + BLOCK_END.length)}`;
    return text === current ? { kind: 'unchanged' } : { kind: 'write', text };
  };
