import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InboxEvent } from '../../machines/external.js';
import { InboxFile } from '../../src/store/inbox-file.js';

const event = (n: number, attempts = 0): InboxEvent => ({
  id: `ext_${n}`,
  source: 'cal',
  item_id: `cal-${n}`,
  title: `item ${n}`,
  starts_at: null,
  detail: null,
  received_at: '2026-11-29T10:00:00.000Z',
  attempts,
});

let dir: string;
let file: InboxFile;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pulse-inbox-file-'));
  file = new InboxFile(join(dir, 'inbox.jsonl'), join(dir, 'dead-letters.jsonl'));
});

afterEach(() => rm(dir, { recursive: true, force: true }));

describe('InboxFile', () => {
  it('replays a settlement: consumed events leave, put-back ones keep their new attempt counts', async () => {
    await file.insert([event(1), event(2), event(3)]);
    await file.settle({ consumed: ['ext_1'], putBack: [event(2, 1), event(3, 2)] }, []);
    const { events } = await file.load();
    expect(events.map((e) => [e.id, e.attempts])).toEqual([
      ['ext_2', 1],
      ['ext_3', 2],
    ]);
  });

  it('writes dead letters with the whole event and takes them out of the journal', async () => {
    await file.insert([event(1), event(2)]);
    const dead = { at: '2026-11-29T10:05:00.000Z', reason: 'max_attempts' as const, event: event(2, 5) };
    await file.settle({ consumed: [], putBack: [] }, [dead]);
    expect((await file.load()).events.map((e) => e.id)).toEqual(['ext_1']);
    expect(await file.loadDeadLetters()).toEqual([dead]);
  });

  it('returns only the most recent dead letters, skipping lines it cannot read', async () => {
    const rows = Array.from({ length: 60 }, (_, i) => ({
      at: '2026-11-29T10:05:00.000Z',
      reason: 'overflow',
      event: event(i),
    }));
    await file.settle({ consumed: [], putBack: [] }, rows as never);
    await appendFile(join(dir, 'dead-letters.jsonl'), '{"torn": \n');
    const loaded = await file.loadDeadLetters();
    expect(loaded).toHaveLength(50);
    expect(loaded.at(-1)?.event.id).toBe('ext_59');
  });

  it('writes nothing for an empty settlement', async () => {
    await file.insert([event(1)]);
    const before = await readFile(join(dir, 'inbox.jsonl'), 'utf8');
    await file.settle({ consumed: [], putBack: [] }, []);
    expect(await readFile(join(dir, 'inbox.jsonl'), 'utf8')).toBe(before);
  });
});
