import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/text/duration.js';

describe('durations for flags', () => {
  it.each([
    ['500ms', 500],
    ['10s', 10_000],
    ['30m', 1_800_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['1m30s', 90_000],
    [' 10S ', 10_000],
  ])('reads %s as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '10', '1.5h', '10x', 'm', '30s10m', '-5s'])(
    'refuses %j and names the forms it takes',
    (text) => {
      expect(() => parseDuration(text)).toThrow(/is not a duration\. Expected a duration such as 500ms/);
    },
  );

  it('refuses a duration of no time', () => {
    expect(() => parseDuration('0s')).toThrow('"0s" is no time at all.');
  });

  it('writes back what it reads', () => {
    for (const text of ['250ms', '10s', '30m', '1h30m', '1m30s'])
      expect(formatDuration(parseDuration(text))).toBe(text);
  });
});
