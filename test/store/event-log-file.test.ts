import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type EventBacklog, EventIndex } from '../../machines/event-index.js';
import type { PulseEvent } from '../../machines/pulse-files.js';
import { appendEvents, eventLine, readEventBacklog, readEventLog } from '../../src/store/event-log-file.js';
import { removeProject, tempProject } from '../support/daemon.js';

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

describe('readEventBacklog: a long log, read lazily', () => {
  const PATHS = [
    '.pulse/plan.md',
    '.pulse/task.md',
    '.pulse/guidance.md',
    '.pulse/constraints.md',
    '.pulse/plán.md',
  ];
  const many = (count: number): PulseEvent[] =>
    Array.from({ length: count }, (_, n) => ({
      id: `evt_20261129T1015${String(n).padStart(8, '0')}Z_${n.toString(16).padStart(8, '0')}`,
      timestamp: `2026-11-29T10:15:${String(n % 60).padStart(2, '0')}.000000Z`,
      kind: n % 97 === 0 ? 'deleted' : 'modified',
      path: PATHS[n % 7 === 0 ? 2 : n % 11 === 0 ? 4 : n % 3]!,
      sha256: n % 97 === 0 ? null : (n % 16).toString(16).repeat(64),
      size: n % 97 === 0 ? null : n,
    }));

  /** The backlog, counting how many events anyone had it parse. */
  const counted = async (path: string) => {
    const { backlog, warnings } = await readEventBacklog(path);
    let parsed = 0;
    const at = backlog.at.bind(backlog);
    const spy: EventBacklog = {
      length: backlog.length,
      at: (index) => {
        parsed++;
        return at(index);
      },
      idAt: (index) => backlog.idAt(index),
      pathAt: (index) => backlog.pathAt(index),
    };
    return { index: EventIndex.loaded(spy), warnings, parsed: () => parsed };
  };

  it('answers as the fully parsed log does, its odd lines (another format, an escape, not an event) included', async () => {
    const events = many(2500);
    const odd =
      '{"path": ".pulse/constraints.md", "kind": "created", "id": "evt_odd_spaced", "timestamp": "t", "sha256": null, "size": null}\n';
    const escaped = eventLine({ ...events[0]!, id: 'evt_odd_escaped', path: '.pulse/"quoted".md' });
    const text = [
      ...events.slice(0, 1200).map(eventLine),
      odd,
      'not an event\n',
      escaped,
      ...events.slice(1200).map(eventLine),
    ].join('');
    const path = await logWith(text);
    const { index, warnings } = await counted(path);
    const full = EventIndex.from((await readEventLog(path)).events);
    expect(warnings).toEqual(['events.jsonl has 1 line(s) that are not events; skipped them.']);
    expect(index.size).toBe(2502);
    expect(full.size).toBe(2502);
    const ids = (list: readonly PulseEvent[]) => list.map((e) => e.id);
    for (const id of [
      null,
      events[2499]!.id,
      events[2000]!.id,
      events[10]!.id,
      'evt_odd_spaced',
      'evt_unknown',
    ]) {
      expect(index.countAfter(id)).toBe(full.countAfter(id));
      expect(ids(index.lastAfter(id, 5))).toEqual(ids(full.lastAfter(id, 5)));
      expect(index.pendingAfter(id)).toEqual(full.pendingAfter(id));
    }
    for (const path of [...PATHS, '.pulse/"quoted".md', '.pulse/none.md'])
      expect(index.lastFor(path)).toEqual(full.lastFor(path));
    expect(index.get(events[5]!.id)).toEqual(events[5]);
    expect(index.get('evt_odd_spaced')?.path).toBe('.pulse/constraints.md');
    expect(index.latest).toEqual(events[2499]);
  });

  it('parses almost nothing to load, find the latest, the last event of each file and what is pending', async () => {
    const events = many(5000);
    const { index, parsed } = await counted(await logWith(events.map(eventLine).join('')));
    expect(index.latest?.id).toBe(events[4999]!.id);
    for (const path of PATHS) index.lastFor(path);
    index.pendingAfter(events[4000]!.id);
    expect(index.has(events[4999]!.id)).toBe(true);
    expect(index.countAfter(events[4990]!.id)).toBe(9);
    // The latest, and the last event of each of the five files.
    expect(parsed()).toBeLessThanOrEqual(6);
  });

  it('takes appends after a loaded log, skipping an id it already holds deep in the log', async () => {
    const events = many(3000);
    const { index } = await counted(await logWith(events.map(eventLine).join('')));
    const next = { ...events[0]!, id: 'evt_20261130T000000000000Z_00000001' };
    const appended = index.appended([events[3]!, next]);
    expect(appended.size).toBe(3001);
    expect(appended.latest).toEqual(next);
    expect(appended.countAfter(events[2999]!.id)).toBe(1);
  });
});
