import { listedItem } from '../harness/pipeline.js';
import type { ExternalItem } from '../machines/external.js';

/** When items appear at the source: `perPoll` every `everyMs` while arrivals last, plus `firstBurst` at 0. */
export interface ArrivalPlan {
  perPoll: number;
  firstBurst: number;
  everyMs: number;
  untilMs: number;
}

/** Arrival times of every item, in order; item `n` gets id `item-n`. */
export const arrivalTimes = ({ perPoll, firstBurst, everyMs, untilMs }: ArrivalPlan): number[] => {
  const times: number[] = Array.from({ length: firstBurst }, () => 0);
  for (let at = 0; at < untilMs; at += everyMs) {
    for (let i = 0; i < perPoll; i++) times.push(at);
  }
  return times;
};

/**
 * A source that, like a mailbox's "latest" view, lists only its most recent `window` items,
 * oldest first: an item not fetched in time scrolls out of the list for good.
 */
export const createFakeSource = (plan: ArrivalPlan, window: number) => {
  const times = arrivalTimes(plan);
  return {
    arrived: times.length,
    /** When the source first listed an item (`item-12` is the 13th to arrive): where its latency starts. */
    listedFrom: (itemId: string): number => times[Number(itemId.slice('item-'.length))]!,
    /** What the source lists at `now`. */
    list(now: number): ExternalItem[] {
      let count = 0;
      while (count < times.length && times[count]! <= now) count++;
      const items: ExternalItem[] = [];
      for (let n = Math.max(0, count - window); n < count; n++) {
        items.push(listedItem(`item-${n}`, `Item ${n}`));
      }
      return items;
    },
  };
};
