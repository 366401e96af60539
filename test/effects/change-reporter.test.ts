import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WatchedName } from '../../machines/watcher-context.js';
import { ATOMIC_SAVE_MS, createChangeReporter, REPORT_WINDOW_MS } from '../../src/effects/change-reporter.js';

let dir: string;
let reports: WatchedName[];
let reporter: ReturnType<typeof createChangeReporter>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pulse-reporter-'));
  reports = [];
  reporter = createChangeReporter(dir, (name) => reports.push(name));
  vi.useFakeTimers();
});

afterEach(async () => {
  reporter.stop();
  vi.useRealTimers();
  await rm(dir, { recursive: true, force: true });
});

describe('createChangeReporter', () => {
  it('reports a notice at once, and a burst once more when its window ends', async () => {
    await writeFile(join(dir, 'guidance.md'), 'x');
    await writeFile(join(dir, 'plan.md'), 'x');
    reporter.notice('guidance.md');
    expect(reports).toEqual(['guidance.md']);
    vi.advanceTimersByTime(REPORT_WINDOW_MS);
    expect(reports, 'a lone notice is reported once').toEqual(['guidance.md']);
    for (let i = 0; i < 5; i += 1) reporter.notice('guidance.md');
    reporter.notice('plan.md');
    expect(reports).toEqual(['guidance.md', 'guidance.md', 'plan.md']);
    vi.advanceTimersByTime(REPORT_WINDOW_MS - 1);
    expect(reports).toHaveLength(3);
    vi.advanceTimersByTime(1);
    expect(reports, 'the last write of the burst').toEqual([
      'guidance.md',
      'guidance.md',
      'plan.md',
      'guidance.md',
    ]);
  });

  it('reports a file that went away only after the atomic-save delay, and once', () => {
    reporter.notice('guidance.md');
    expect(reports).toEqual([]);
    vi.advanceTimersByTime(ATOMIC_SAVE_MS - 1);
    expect(reports).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(reports).toEqual(['guidance.md']);
  });

  it('reports a save by rename (the file away, then back) once, when it is back', async () => {
    await writeFile(join(dir, 'guidance.md'), 'old');
    reporter.notice('guidance.md');
    expect(reports).toEqual(['guidance.md']);
    // Moved aside inside the window: the report that window owes is dropped, not made on a missing file.
    reporter.notice('guidance.md');
    await rm(join(dir, 'guidance.md'));
    reporter.notice('guidance.md');
    vi.advanceTimersByTime(REPORT_WINDOW_MS);
    expect(reports).toEqual(['guidance.md']);
    await writeFile(join(dir, 'guidance.md'), 'new');
    reporter.notice('guidance.md');
    expect(reports).toEqual(['guidance.md', 'guidance.md']);
    vi.advanceTimersByTime(ATOMIC_SAVE_MS + REPORT_WINDOW_MS);
    expect(reports).toEqual(['guidance.md', 'guidance.md']);
  });

  it('reports unknown at once, without looking for a file of that name', () => {
    reporter.notice('unknown');
    expect(reports).toEqual(['unknown']);
  });

  it('reports nothing still due once stopped', async () => {
    await writeFile(join(dir, 'guidance.md'), 'x');
    reporter.notice('guidance.md');
    reporter.notice('guidance.md');
    reporter.notice('focus.json');
    reporter.stop();
    vi.advanceTimersByTime(ATOMIC_SAVE_MS + REPORT_WINDOW_MS);
    expect(reports).toEqual(['guidance.md']);
  });
});
