import { describe, expect, it } from 'vitest';
import { describeMiss, formatSteps, parsePath, valueAt } from '../../src/sources/items/item-path.js';

const at = (value: unknown, path: string) => valueAt(value, parsePath(path));

describe('item paths', () => {
  const issue = {
    fields: { priority: { name: 'High' }, labels: ['ops', 'db'] },
    headers: [
      { name: 'From', value: 'a@example.com' },
      { name: 'Subject', value: 'Disk full' },
    ],
    'odd key': 1,
  };

  it('walks dotted keys, array indexes from the start and the end, and key matches', () => {
    expect(at(issue, 'fields.priority.name')).toBe('High');
    expect(at(issue, 'fields.labels[0]')).toBe('ops');
    expect(at(issue, 'fields.labels.1')).toBe('db');
    expect(at(issue, 'fields.labels[-1]')).toBe('db');
    expect(at(issue, 'headers[name=Subject].value')).toBe('Disk full');
    expect(at(issue, 'odd key')).toBe(1);
  });

  it('is undefined where a step is missing, and never reads inherited properties', () => {
    expect(at(issue, 'fields.severity.name')).toBeUndefined();
    expect(at(issue, 'fields.labels[5]')).toBeUndefined();
    expect(at(issue, 'headers[name=Cc].value')).toBeUndefined();
    expect(at({ headers: [{ value: 'no name' }] }, 'headers[name=undefined].value')).toBeUndefined();
    expect(at(issue, 'fields.priority.name.length')).toBeUndefined();
    expect(at(issue, 'constructor')).toBeUndefined();
    expect(at({}, '__proto__')).toBeUndefined();
  });

  it('writes a path back as it was written', () => {
    for (const path of ['fields.priority.name', 'items[0].id', 'headers[name=Subject].value', 'a[-1][2]'])
      expect(formatSteps(parsePath(path))).toBe(path);
  });

  it.each([
    ['', /the path is empty/],
    ['a..b', /has an empty or unbalanced step/],
    ['.a', /has an empty or unbalanced step/],
    ['a[0', /has an empty or unbalanced step/],
    ['a[x]', /has \[x\]: write an index \(\[0\], \[-1\] for the last\) or a match \(\[name=Subject\]\)/],
    [Array.from({ length: 40 }, () => 'k').join('.'), /more than 32 steps/],
  ])('refuses %j and says why', (path, message) => {
    expect(() => parsePath(path)).toThrow(message);
  });

  it('says where a path stops and what is there', () => {
    expect(describeMiss(issue, parsePath('fields.priority.level'))).toBe(
      'at "fields.priority" there is an object with keys name',
    );
    expect(describeMiss(issue, parsePath('title'))).toBe(
      'at the top there is an object with keys fields, headers, odd key',
    );
    expect(describeMiss(issue, parsePath('headers[name=Cc].value'))).toBe(
      'at "headers" there is a list of 2 objects',
    );
  });
});
