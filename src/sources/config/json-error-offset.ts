import { parse } from 'jsonc-parser';

/**
 * Where JSON.parse gave up on `text`, as an offset: from its message where it names a position,
 * else (Node 20 names none for an unexpected token, e.g. a trailing comma) from a strict parse
 * with jsonc-parser, which reports the offset of each error. Null for valid JSON.
 */
export const jsonErrorOffset = (text: string, message: string): number | null => {
  const position = /at position (\d+)/.exec(message)?.[1];
  if (position !== undefined) return Number(position);
  const errors: Array<{ offset: number }> = [];
  parse(text, errors as never, {
    disallowComments: true,
    allowTrailingComma: false,
    allowEmptyContent: false,
  });
  return errors[0]?.offset ?? (/end of JSON input/.test(message) ? text.length : null);
};

/** `line L, column C` (both from 1) of an offset into `text`. */
export const lineAndColumn = (text: string, offset: number): string => {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
};
