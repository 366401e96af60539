import type { InboxEvent } from '../../machines/external.js';

/** Event `n` of the source `cal`, as the machine tests restore it or offer it to the inbox. */
export const inboxEvent = (n: number, attempts = 0): InboxEvent => ({
  id: `ext_${n}`,
  source: 'cal',
  item_id: `i${n}`,
  title: `Item ${n}`,
  starts_at: null,
  detail: null,
  received_at: '2026-01-01T00:00:00.000Z',
  attempts,
});
