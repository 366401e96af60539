import { parseArgs } from 'node:util';
import { customScenario, SCENARIOS, type Scenario, SEED_QS } from './scenarios.js';

/** What `npm run sim:delivery -- …` asked for. */
export interface SimOptions {
  scenarios: Scenario[];
  qs: number[];
  /** Both modes when the flag is left out. */
  catchUp: boolean[];
  /** Also run catch-up on with the seed's retry rule, for the latency comparison (on unless `--seed-rule off`). */
  seedRule: boolean;
  window: number;
  cap: number;
  seeds: number;
  arrivalHours: number;
  drainHours: number;
  pollSec: number;
  reflectSec: number;
  maxAttempts: number;
  json: boolean;
  doc: boolean;
}

/** Thrown for a flag the simulation cannot run with; the CLI prints its message. */
export class SimArgsError extends Error {
  override name = 'SimArgsError';
}

const number = (flag: string, value: string | undefined, fallback: number, min = 0): number => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min)
    throw new SimArgsError(`--${flag} must be a number ≥ ${min}, got "${value}".`);
  return n;
};

const probability = (value: string): number => {
  const q = Number(value);
  if (!(q >= 0 && q <= 1)) throw new SimArgsError(`--q must be a probability in [0, 1], got "${value}".`);
  return q;
};

/** Parses the flags of the delivery simulation, with the seed's setup as defaults. */
export const parseSimArgs = (argv: string[]): SimOptions => {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      scenario: { type: 'string' },
      'per-poll': { type: 'string' },
      'first-burst': { type: 'string' },
      q: { type: 'string' },
      'catch-up': { type: 'string' },
      'seed-rule': { type: 'string' },
      window: { type: 'string' },
      cap: { type: 'string' },
      seeds: { type: 'string' },
      'arrival-hours': { type: 'string' },
      'drain-hours': { type: 'string' },
      'poll-sec': { type: 'string' },
      'reflect-sec': { type: 'string' },
      'max-attempts': { type: 'string' },
      json: { type: 'boolean', default: false },
      doc: { type: 'boolean', default: false },
    },
  });
  const custom = values['per-poll'] !== undefined || values['first-burst'] !== undefined;
  if (custom && values.scenario !== undefined) {
    throw new SimArgsError('Give either --scenario or --per-poll/--first-burst, not both.');
  }
  let scenarios: Scenario[] = Object.values(SCENARIOS);
  if (custom) {
    scenarios = [
      customScenario(
        number('per-poll', values['per-poll'], 0),
        number('first-burst', values['first-burst'], 0),
      ),
    ];
  } else if (values.scenario !== undefined) {
    const known = SCENARIOS[values.scenario as keyof typeof SCENARIOS];
    if (known === undefined) throw new SimArgsError(`No scenario "${values.scenario}". Known: a, b, c.`);
    scenarios = [known];
  }
  const catchUp = values['catch-up'];
  if (catchUp !== undefined && catchUp !== 'on' && catchUp !== 'off') {
    throw new SimArgsError(`--catch-up must be on or off, got "${catchUp}".`);
  }
  const seedRule = values['seed-rule'];
  if (seedRule !== undefined && seedRule !== 'on' && seedRule !== 'off') {
    throw new SimArgsError(`--seed-rule must be on or off, got "${seedRule}".`);
  }
  const attempts = values['max-attempts'];
  return {
    scenarios,
    qs: values.q === undefined ? [...SEED_QS] : [probability(values.q)],
    catchUp: catchUp === undefined ? [false, true] : [catchUp === 'on'],
    seedRule: seedRule !== 'off',
    window: number('window', values.window, 90, 1),
    cap: number('cap', values.cap, 20, 1),
    seeds: number('seeds', values.seeds, 10, 1),
    arrivalHours: number('arrival-hours', values['arrival-hours'], 2),
    drainHours: number('drain-hours', values['drain-hours'], 2),
    pollSec: number('poll-sec', values['poll-sec'], 300, 1),
    reflectSec: number('reflect-sec', values['reflect-sec'], 120, 1),
    maxAttempts:
      attempts === undefined || attempts === 'unbounded' ? Infinity : number('max-attempts', attempts, 5, 1),
    json: values.json,
    doc: values.doc,
  };
};
