import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PulseEvent } from '../../machines/pulse-files.js';
import { appendEvents, eventLine, readEventLog } from '../../src/store/event-log-file.js';
import { removeProject, tempProject } from '../helpers/daemon.js';

const event = (n: number, path = '.pulse/guidance.md'): PulseEvent => ({
  id: `evt_20261129T10150000000${n}Z_0000000${n}`,
  timestamp: `2026-11-29T10:15:00.00000${n}Z`,
  kind: 'modified',
  path,
  sha256: String(n).repeat(64),
  size: 10 + n,
});

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeProject));
});

const logWith = async (content: string | Buffer) => {
  const dir = await tempProject('pulse-log-');
  dirs.push(dir);
  const path = join(dir, 'events.jsonl');
  await writeFile(path, content);
  return path;
};

describe('readEventLog', () => {
  it('reads a missing log as empty, without warnings', async () => {
    const dir = await tempProject('pulse-log-');
    dirs.push(dir);
    expect(await readEventLog(join(dir, 'events.jsonl'))).toEqual({ events: [], warnings: [] });
  });

  it('cuts a torn last line off the file and warns about it', async () => {
    const intact = eventLine(event(1)) + eventLine(event(2));
    const path = await logWith(`${intact}{"id":"evt_20261129T101500000003Z_0000`);
    const { events, warnings } = await readEventLog(path);
    expect(events.map((e) => e.id)).toEqual([event(1).id, event(2).id]);
    expect(warnings).toEqual([expect.stringMatching(/torn line .*removed it/)]);
    expect(await readFile(path, 'utf8')).toBe(intact);
  });

  it('cuts a torn line that ends inside a multi-byte character without touching the line before', async () => {
    const intact = eventLine(event(1));
    // "é" is two bytes in UTF-8; the crash kept only the first.
    const torn = Buffer.concat([Buffer.from(`${intact}{"note":"caf`), Buffer.from([0xc3])]);
    const path = await logWith(torn);
    const { events } = await readEventLog(path);
    expect(events).toEqual([event(1)]);
    expect(await readFile(path, 'utf8')).toBe(intact);
    expect((await readEventLog(path)).events).toEqual([event(1)]);
  });

  it('keeps a valid last line that lacks its newline, and adds the newline', async () => {
    const path = await logWith(eventLine(event(1)) + eventLine(event(2)).trimEnd());
    const { events, warnings } = await readEventLog(path);
    expect(events).toEqual([event(1), event(2)]);
    expect(warnings).toEqual([]);
    expect(await readFile(path, 'utf8')).toBe(eventLine(event(1)) + eventLine(event(2)));
  });

  it('skips lines in the middle that are not events, with one warning, and keeps the events around them', async () => {
    const path = await logWith(
      [
        eventLine(event(1)),
        'not json at all\n',
        '{"id":"evt_x","kind":"renamed","path":".pulse/guidance.md"}\n',
        '[1,2,3]\n',
        '\n',
        eventLine(event(2)),
      ].join(''),
    );
    const { events, warnings } = await readEventLog(path);
    expect(events).toEqual([event(1), event(2)]);
    expect(warnings).toEqual(['events.jsonl has 3 line(s) that are not events; skipped them.']);
  });

  it('writes nothing with repair: false, yet reports the torn line', async () => {
    const torn = `${eventLine(event(1))}{"id":"evt_2026`;
    const tornPath = await logWith(torn);
    const read = await readEventLog(tornPath, { repair: false });
    expect(read.events).toEqual([event(1)]);
    expect(read.warnings).toEqual([expect.stringMatching(/torn line .*pulse start removes it/)]);
    expect(await readFile(tornPath, 'utf8')).toBe(torn);

    const unterminated = eventLine(event(1)).trimEnd();
    const unterminatedPath = await logWith(unterminated);
    expect((await readEventLog(unterminatedPath, { repair: false })).events).toEqual([event(1)]);
    expect(await readFile(unterminatedPath, 'utf8')).toBe(unterminated);
  });

  it("accepts PulseAgent's lines: +00:00 timestamps, other key orders, extra keys", async () => {
    const path = await logWith(
      '{"path": ".pulse/constraints.md", "kind": "created", "id": "evt_20260101T000000000001Z_abcdef01", "timestamp": "2026-01-01T00:00:00.000001+00:00", "sha256": "ab", "size": 2, "extra": true}\n',
    );
    expect((await readEventLog(path)).events).toEqual([
      {
        id: 'evt_20260101T000000000001Z_abcdef01',
        timestamp: '2026-01-01T00:00:00.000001+00:00',
        kind: 'created',
        path: '.pulse/constraints.md',
        sha256: 'ab',
        size: 2,
      },
    ]);
  });
});

describe('appendEvents', () => {
  it("appends one line per event in PulseAgent's key order, and reads back the same events", async () => {
    const path = await logWith('');
    await appendEvents(path, [event(1)]);
    await appendEvents(path, [
      event(2, '.pulse/plan.md'),
      { ...event(3), kind: 'deleted', sha256: null, size: null },
    ]);
    const text = await readFile(path, 'utf8');
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(Object.keys(JSON.parse(lines[0]!))).toEqual(['id', 'timestamp', 'kind', 'path', 'sha256', 'size']);
    expect(JSON.parse(lines[2]!)).toMatchObject({ kind: 'deleted', sha256: null, size: null });
    expect((await readEventLog(path)).events).toEqual([
      event(1),
      event(2, '.pulse/plan.md'),
      { ...event(3), kind: 'deleted', sha256: null, size: null },
    ]);
  });

  it('writes nothing for an empty batch', async () => {
    const path = await logWith(eventLine(event(1)));
    await appendEvents(path, []);
    expect(await readFile(path, 'utf8')).toBe(eventLine(event(1)));
  });
});
