import type { Readable } from 'node:stream';

const MAX_LINE = 2_000;

/** Splits a stream into lines cut to a bounded length: a flooding child can neither block nor bloat us. */
export const forwardLines = (stream: Readable, emit: (line: string) => void) => {
  let line = '';
  let cut = false;
  const flush = () => {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (text !== '') emit(cut ? `${text}…` : text);
    line = '';
    cut = false;
  };
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    for (const [index, part] of chunk.split('\n').entries()) {
      if (index > 0) flush();
      if (cut) continue;
      line += part;
      if (line.length > MAX_LINE) {
        line = line.slice(0, MAX_LINE);
        cut = true;
      }
    }
  });
  stream.on('end', flush);
  stream.on('error', () => {});
};
