import type { Thought } from '../machines/delivery-rules.js';
import type { InboxEvent } from '../machines/external.js';

/** A stretch of simulated time in which the thinker's endpoint is down. */
export interface Outage {
  fromMs: number;
  toMs: number;
}

/**
 * The seed's thinker: fails with probability `q`, otherwise finds every event urgent (0.9). Its
 * failures are independent from one call to the next, as a flaky answer's are (an endpoint that
 * is down stays down): each is a failed answer, which the gate asks again at the next reflection.
 * During an `outage` every call fails as an endpoint that is down does, which the gate backs off from.
 */
export const createFakeThinker = (q: number, random: () => number, outage?: Outage) => {
  const thinker = {
    calls: 0,
    failures: 0,
    async think({ events, now }: { events: InboxEvent[]; now: number }): Promise<Thought> {
      thinker.calls++;
      if (outage !== undefined && now >= outage.fromMs && now < outage.toMs) {
        thinker.failures++;
        throw Object.assign(new Error('the simulated endpoint is down'), { kind: 'endpoint' });
      }
      if (random() < q) {
        thinker.failures++;
        throw Object.assign(new Error('the simulated thinker failed'), { kind: 'answer' });
      }
      return { judgements: events.map((e) => ({ id: e.id, urgency: 0.9 })), by: 'sim', note: null };
    },
  };
  return thinker;
};
