import type { InboxEvent } from '../machines/external.js';
import type { Judgement } from '../machines/gate.js';

/** The seed's thinker: fails with probability `q`, otherwise finds every event urgent (0.9). */
export const createFakeThinker = (q: number, random: () => number) => {
  const thinker = {
    calls: 0,
    failures: 0,
    async think({ events }: { events: InboxEvent[] }): Promise<Judgement[]> {
      thinker.calls++;
      if (random() < q) {
        thinker.failures++;
        throw new Error('the simulated thinker failed');
      }
      return events.map((e) => ({ id: e.id, urgency: 0.9 }));
    },
  };
  return thinker;
};
