import type { Thought } from '../machines/delivery-rules.js';
import type { InboxEvent } from '../machines/external.js';

/** The seed's thinker: fails with probability `q`, otherwise finds every event urgent (0.9). */
export const createFakeThinker = (q: number, random: () => number) => {
  const thinker = {
    calls: 0,
    failures: 0,
    async think({ events }: { events: InboxEvent[] }): Promise<Thought> {
      thinker.calls++;
      if (random() < q) {
        thinker.failures++;
        throw new Error('the simulated thinker failed');
      }
      return { judgements: events.map((e) => ({ id: e.id, urgency: 0.9 })), by: 'sim', note: null };
    },
  };
  return thinker;
};
