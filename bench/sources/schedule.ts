/** One poll as seen by the polled server: which source, when it began and when it was answered (ms since the epoch). */
export interface PollTime {
  source: number;
  at: number;
  answeredAt: number | null;
}

/** How well a set of pollers kept their interval over a window. */
export interface ScheduleResult {
  /** Polls that fell inside the window. */
  polls: number;
  /** Per poll in the window: its gap since the source's previous poll, minus the interval, in ms. */
  spacing: number[];
  /**
   * Per poll in the window: how late it began against the poller's own schedule (one interval
   * after the previous poll was answered), in ms. Leaves out the server's answer time.
   */
  drift: number[];
  /** Gaps over 2× the interval, each counted once; a source silent for its last 2× interval of the window counts too. */
  missed: number;
  /** For each missed gap, when it began, in ms from the window's start (negative: before it): tells one stall of the whole process from sources falling behind one by one. */
  missedFrom: number[];
  /** Gaps under 0.5× the interval. */
  doubled: number;
  /** The longest gap seen, in ms (the silent tails included). */
  longestGapMs: number;
  /** Sources that were never polled within the window. */
  silent: number;
}

/**
 * Gaps between consecutive polls of each source, for every poll inside `[start, end)`; the
 * last poll before the window anchors the first gap, so each poll in the window has one.
 */
export const analyseSchedule = (
  polls: readonly PollTime[],
  sources: readonly number[],
  { start, end, intervalMs }: { start: number; end: number; intervalMs: number },
): ScheduleResult => {
  const bySource = new Map<number, PollTime[]>(sources.map((source) => [source, []]));
  for (const poll of polls) bySource.get(poll.source)?.push(poll);
  const result: ScheduleResult = {
    polls: 0,
    spacing: [],
    drift: [],
    missed: 0,
    missedFrom: [],
    doubled: 0,
    longestGapMs: 0,
    silent: 0,
  };
  const gap = (from: number, to: number) => {
    result.longestGapMs = Math.max(result.longestGapMs, to - from);
    if (to - from > 2 * intervalMs) {
      result.missed++;
      result.missedFrom.push(from - start);
    }
  };
  for (const times of bySource.values()) {
    times.sort((a, b) => a.at - b.at);
    let previous: PollTime | null = null;
    let inWindow = 0;
    for (const poll of times) {
      const { at } = poll;
      if (at >= end) break;
      if (at >= start) {
        inWindow++;
        const since = at - (previous?.at ?? start);
        if (previous !== null) {
          result.spacing.push(since - intervalMs);
          if (previous.answeredAt !== null) result.drift.push(at - previous.answeredAt - intervalMs);
          if (since < 0.5 * intervalMs) result.doubled++;
        }
        gap(previous?.at ?? start, at);
      }
      previous = poll;
    }
    result.polls += inWindow;
    if (inWindow === 0) result.silent++;
    gap(previous?.at ?? start, end);
  }
  return result;
};
