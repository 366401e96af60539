import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SEEN_REFRESH_MS, SEEN_TTL_MS, SeenStore } from '../../src/store/seen-store.js';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 0, 5);

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const seenFile = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pulse-seen-'));
  dirs.push(dir);
  return join(dir, 'external_seen.jsonl');
};

const rowsOf = async (path: string) =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { k: string; t: number });

describe('SeenStore', () => {
  it('keeps seeing an item listed every hour for four weeks, writing about one line a day', async () => {
    const path = await seenFile();
    const seen = await SeenStore.load(path, { now: T0 });
    await seen.mark('dex', ['task-1'], T0);
    for (let now = T0 + HOUR; now <= T0 + 28 * DAY; now += HOUR) {
      expect(seen.has('dex', 'task-1', now), `seen at hour ${(now - T0) / HOUR}`).toBe(true);
      await seen.mark('dex', ['task-1'], now);
    }
    const rows = await rowsOf(path);
    expect(rows.length, 'one line a day, not one a poll').toBe(29);
    expect(rows.at(-1)!.t).toBeGreaterThan(T0 + 27 * DAY);
  });

  it('writes nothing for an item marked again within the refresh interval, and says so ahead', async () => {
    const path = await seenFile();
    const seen = await SeenStore.load(path, { now: T0 });
    await seen.mark('dex', ['task-1'], T0);
    const before = await readFile(path, 'utf8');
    expect(seen.markedRecently('dex', 'task-1', T0 + SEEN_REFRESH_MS - 1)).toBe(true);
    await seen.mark('dex', ['task-1'], T0 + SEEN_REFRESH_MS - 1);
    expect(await readFile(path, 'utf8')).toBe(before);
    expect(seen.markedRecently('dex', 'task-1', T0 + SEEN_REFRESH_MS)).toBe(false);
    expect(seen.has('dex', 'task-1', T0 + SEEN_REFRESH_MS)).toBe(true);
    expect(seen.markedRecently('dex', 'other', T0)).toBe(false);
  });

  it('counts the TTL from the last listing: forgotten 7 days after it, not after the first', async () => {
    const path = await seenFile();
    const seen = await SeenStore.load(path, { now: T0 });
    await seen.mark('dex', ['task-1'], T0);
    await seen.mark('dex', ['task-1'], T0 + 5 * DAY);
    expect(seen.has('dex', 'task-1', T0 + 8 * DAY), 'listed on day 5: still seen on day 8').toBe(true);
    expect(seen.has('dex', 'task-1', T0 + 5 * DAY + SEEN_TTL_MS - 1)).toBe(true);
    expect(seen.has('dex', 'task-1', T0 + 5 * DAY + SEEN_TTL_MS)).toBe(false);
    // Listed again once forgotten: new again, and marked anew.
    await seen.mark('dex', ['task-1'], T0 + 20 * DAY);
    expect(seen.has('dex', 'task-1', T0 + 21 * DAY)).toBe(true);
  });

  it('keeps the latest listing across a restart: compaction keeps the latest time of each key', async () => {
    const path = await seenFile();
    const first = await SeenStore.load(path, { now: T0 });
    await first.mark('dex', ['task-1', 'task-2'], T0);
    await first.mark('dex', ['task-1'], T0 + 3 * DAY);
    expect((await rowsOf(path)).map((r) => r.t)).toEqual([T0, T0, T0 + 3 * DAY]);

    // Stopped until day 8: task-2 (last listed on day 0) is gone, task-1 (day 3) is still seen.
    const second = await SeenStore.load(path, { now: T0 + 8 * DAY });
    expect(second.has('dex', 'task-1', T0 + 8 * DAY)).toBe(true);
    expect(second.has('dex', 'task-2', T0 + 8 * DAY)).toBe(false);
    expect(await rowsOf(path)).toEqual([{ k: 'dex\u0000task-1', t: T0 + 3 * DAY }]);
  });

  it('takes the latest of unordered lines, whatever order a file holds them in', async () => {
    const path = await seenFile();
    const line = (t: number) => `${JSON.stringify({ k: 'dex\u0000task-1', t })}\n`;
    await writeFile(path, line(T0 + 2 * DAY) + line(T0) + line(T0 + DAY));
    const seen = await SeenStore.load(path, { now: T0 + 8 * DAY });
    expect(seen.has('dex', 'task-1', T0 + 8 * DAY), 'seen 6 days after its latest line').toBe(true);
    expect(await rowsOf(path)).toEqual([{ k: 'dex\u0000task-1', t: T0 + 2 * DAY }]);
  });

  it('compacts while running once the lines outgrow the live marks, dropping expired ones', async () => {
    const path = await seenFile();
    const ttlMs = 70;
    const refreshMs = 10;
    const seen = await SeenStore.load(path, { now: 0, ttlMs, refreshMs });
    const ids = Array.from({ length: 600 }, (_, i) => `task-${i}`);
    await seen.mark('dex', ['gone'], 0);
    // 600 marks, then three refreshes: 2,401 lines in all would pass 2 × 601 + 1,000.
    for (const now of [0, 10, 20]) await seen.mark('dex', ids, now);
    expect((await rowsOf(path)).length).toBe(1 + 3 * 600);
    await seen.mark('dex', ids, 80);
    const rows = await rowsOf(path);
    expect(rows.length, 'rewritten as the live marks').toBe(600);
    expect(rows.every((r) => r.t === 80)).toBe(true);
    expect(seen.size, '"gone", last listed at 0, is forgotten at 80').toBe(600);
    // Appends go on after the rewrite.
    await seen.mark('dex', ['new'], 80);
    expect((await rowsOf(path)).length).toBe(601);
  });

  it("keeps which source first listed a server's item, through a restart and its compaction, and forgets it with the TTL", async () => {
    const path = await seenFile();
    const seen = await SeenStore.load(path, { now: T0 });
    await seen.markOnServer('git', ['id:1347'], 'issues', T0);
    // A second source listing it later leaves the first as it was, and moves the time on.
    await seen.markOnServer('git', ['id:1347'], 'issues-text', T0 + 2 * DAY);
    expect(seen.firstListedBy('git', ['id:1347'], T0 + 2 * DAY)).toBe('issues');
    expect(seen.firstListedBy('jira', ['id:1347'], T0), 'another server').toBeNull();
    expect(seen.has('issues', '1347', T0), 'a server mark is not a source mark').toBe(false);

    const restarted = await SeenStore.load(path, { now: T0 + 3 * DAY });
    expect(restarted.firstListedBy('git', ['url:x', 'id:1347'], T0 + 3 * DAY)).toBe('issues');
    expect(await rowsOf(path), 'compacted: the latest time, the first source').toEqual([
      { k: 'git\u0000id:1347', t: T0 + 2 * DAY, s: 'issues' },
    ]);
    expect(restarted.firstListedBy('git', ['id:1347'], T0 + 2 * DAY + SEEN_TTL_MS)).toBeNull();
  });
});
