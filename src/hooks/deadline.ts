/** When a judgement must end, on a clock a test may replace with a step counter. */
export interface Deadline {
  /** Whether the time is up; each call is one step of work. */
  passed(): boolean;
  /** Milliseconds left, 0 once passed. */
  left(): number;
}

/** A deadline `ms` from now; `now` is the clock (a counter in tests, so that the budget counts steps). */
export const deadlineIn = (ms: number, now: () => number = () => performance.now()): Deadline => {
  const end = now() + ms;
  return {
    passed: () => now() >= end,
    left: () => Math.max(0, end - now()),
  };
};
