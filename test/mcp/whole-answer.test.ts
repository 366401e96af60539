import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../machines/delivery-rules.js';
import { EventIndex } from '../../machines/event-index.js';
import { NO_FAULTS } from '../../machines/log-faults.js';
import { INITIAL_REPLAN_CONTEXT } from '../../machines/replan-context.js';
import {
  attentionAnswer,
  interruptAnswer,
  interruptOutputSchema,
  wholeAnswer,
} from '../../src/mcp/should-interrupt.js';

/*
 * `pulse_should_interrupt` builds its answer as one object literal rather than spreading its
 * three parts together (the SDK's check of the answer and its JSON ran several times slower on
 * the spread object): the bytes an agent reads must stay exactly those of the spread.
 */

const delivery: Delivery = {
  deliveryId: 'd-1',
  holder: 'session:abc',
  holderSession: 'abc',
  leaseExpiresAt: Date.UTC(2026, 11, 3, 18, 0, 0),
  events: [
    {
      id: 'e-1',
      source: 'calendar',
      item_id: '1',
      title: 'Standup',
      starts_at: '2026-12-03T18:30:00.000Z',
      url: 'https://example.test/1',
      detail: 'room 4',
      received_at: '2026-12-03T17:59:00.000Z',
      attempts: 0,
      urgency: 0.8,
      why: 'starts soon',
    },
    {
      id: 'e-2',
      source: 'mail',
      item_id: '2',
      title: 'Invoice',
      starts_at: null,
      detail: null,
      received_at: '2026-12-03T17:59:30.000Z',
      attempts: 1,
      urgency: 0.4,
    },
  ],
};

const decisions = {
  quiet: interruptAnswer({ index: EventIndex.empty(), faults: NO_FAULTS }, INITIAL_REPLAN_CONTEXT, null),
  'blind and pending, for one session': interruptAnswer(
    { index: EventIndex.empty(), faults: { ...NO_FAULTS, folder: 'is missing: re-create it' } },
    {
      ...INITIAL_REPLAN_CONTEXT,
      pendingEventId: 'evt-2',
      pendingFiles: ['.pulse/guidance.md'],
      blind: [{ file: '.pulse/', reason: 'is missing: re-create it' }],
    },
    'evt-1',
    'session:abc',
  ),
};

describe("pulse_should_interrupt's whole answer", () => {
  for (const [state, decision] of Object.entries(decisions)) {
    for (const [offered, attention] of [
      ['no delivery', attentionAnswer(null)],
      ['a delivery', attentionAnswer(delivery)],
    ] as const) {
      for (const handle of [null, 'h4ndle-of-an-agent']) {
        it(`is the spread of its parts to the byte: ${state}, ${offered}, handle ${handle}`, () => {
          const whole = wholeAnswer(decision, attention, handle);
          expect(JSON.stringify(whole)).toBe(
            JSON.stringify({ ...decision, ...attention, agent_handle: handle }),
          );
          expect(interruptOutputSchema.safeParse(whole).success).toBe(true);
        });
      }
    }
  }

  it('has every field the output schema names, and no other', () => {
    const whole = wholeAnswer(decisions.quiet, attentionAnswer(null), null);
    expect(Object.keys(whole).sort()).toEqual(Object.keys(interruptOutputSchema.shape).sort());
  });
});
