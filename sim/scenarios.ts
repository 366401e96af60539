// The seed is PulseAgent 0.1.0, the prototype pulse grew from. Its delivery experiment and the
// figures it measured come from its design notes, which are not in this repository: they are
// copied here and in doc.ts.

/** One of the seed's arrival patterns, with what the seed measured for it. */
export interface Scenario {
  name: string;
  label: string;
  perPoll: number;
  firstBurst: number;
  /** The seed's loss after fix #197 ("seed today"), per q, in %; `null` for a custom scenario. */
  seedLossPct: Record<string, number> | null;
  /** The seed's mean think calls per q, where its notes give them. */
  seedThinkCalls: Record<string, number> | null;
}

/** The failure rates the seed ran. */
export const SEED_QS = [0, 0.2, 0.5] as const;

/** The seed's three scenarios. */
export const SCENARIOS: Record<'a' | 'b' | 'c', Scenario> = {
  a: {
    name: 'a',
    label: '(a) 5 per poll',
    perPoll: 5,
    firstBurst: 0,
    seedLossPct: { 0: 0, 0.2: 0, 0.5: 0 },
    seedThinkCalls: { 0: 24, 0.2: 25.5, 0.5: 27.3 },
  },
  b: {
    name: 'b',
    label: '(b) 50 at the first poll',
    perPoll: 0,
    firstBurst: 50,
    seedLossPct: { 0: 0, 0.2: 0, 0.5: 0 },
    seedThinkCalls: null,
  },
  c: {
    name: 'c',
    label: '(c) 30 per poll',
    perPoll: 30,
    firstBurst: 0,
    seedLossPct: { 0: 23.6, 0.2: 23.6, 0.5: 23.6 },
    seedThinkCalls: null,
  },
};

/** A scenario of one's own: `perPoll` at every poll while arrivals last, `firstBurst` more at the first. */
export const customScenario = (perPoll: number, firstBurst: number): Scenario => ({
  name: 'custom',
  label: `custom: ${perPoll} per poll, ${firstBurst} more at the first`,
  perPoll,
  firstBurst,
  seedLossPct: null,
  seedThinkCalls: null,
});
