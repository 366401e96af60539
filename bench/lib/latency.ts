/** Per-call timings of one function within a round. */
export interface Block {
  /** Milliseconds each call took, in call order. */
  samples: number[];
  /** Sum of the calls' durations, in milliseconds. */
  elapsedMs: number;
}

/**
 * Makes `count` calls of each function, interleaved call by call in `order` (a, b, c, a, b,
 * c, …), and times each: whatever load the machine has at a moment falls on all of them
 * alike. A full GC in this process first (with `--expose-gc`), so the client's garbage from
 * earlier rounds is not collected inside this one.
 */
export const timeInterleaved = async (
  calls: ReadonlyArray<() => Promise<unknown>>,
  order: readonly number[],
  count: number,
): Promise<Block[]> => {
  globalThis.gc?.();
  const blocks: Block[] = calls.map(() => ({ samples: [], elapsedMs: 0 }));
  for (let n = 0; n < count; n++) {
    for (const i of order) {
      const before = performance.now();
      await calls[i]!();
      const took = performance.now() - before;
      blocks[i]!.samples.push(took);
      blocks[i]!.elapsedMs += took;
    }
  }
  return blocks;
};
