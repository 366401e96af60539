/** Summary of a set of timings, in the same unit as the samples. */
export interface Summary {
  count: number;
  p50: number;
  p99: number;
  mean: number;
}

/** The `p`-th percentile (0–100) by linear interpolation between closest ranks, as numpy's default. */
export const percentile = (samples: readonly number[], p: number): number => {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
};

export const median = (samples: readonly number[]): number => percentile(samples, 50);

export const mean = (samples: readonly number[]): number =>
  samples.length === 0 ? Number.NaN : samples.reduce((sum, x) => sum + x, 0) / samples.length;

export const summarize = (samples: readonly number[]): Summary => ({
  count: samples.length,
  p50: percentile(samples, 50),
  p99: percentile(samples, 99),
  mean: mean(samples),
});

/** The median and the interquartile range (25th to 75th percentile). */
export const spread = (samples: readonly number[]) => ({
  median: percentile(samples, 50),
  low: percentile(samples, 25),
  high: percentile(samples, 75),
});
