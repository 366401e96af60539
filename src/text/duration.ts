// Our own, not `ms`: that one takes a bare number as milliseconds and "1.5h", and has no types;
// flags here take the forms `pulse focus` does, plus `ms` for tests.
const FORMS = 'Expected a duration such as 500ms, 10s, 30m, 2h or 1h30m.';
const PARTS = /^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/;

/** The milliseconds of a positive duration such as `500ms`, `10s`, `30m`, `2h` or `1h30m`. */
export const parseDuration = (text: string): number => {
  const value = text.trim().toLowerCase();
  const parts = PARTS.exec(value);
  if (parts === null || value === '') throw new Error(`"${text}" is not a duration. ${FORMS}`);
  const [, h = 0, m = 0, s = 0, ms = 0] = parts;
  const total = Number(h) * 3600_000 + Number(m) * 60_000 + Number(s) * 1000 + Number(ms);
  if (total <= 0) throw new Error(`"${text}" is no time at all. ${FORMS}`);
  return total;
};

/** A duration the way `parseDuration` reads it back: `30m`, `10s`, `1h30m`, `250ms`. */
export const formatDuration = (ms: number): string => {
  const units: Array<[string, number]> = [
    ['h', 3600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ];
  let rest = Math.round(ms);
  let text = '';
  for (const [unit, size] of units) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0) text += `${count}${unit}`;
  }
  return text || '0ms';
};
