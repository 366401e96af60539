import { type EventObject, fromCallback } from 'xstate';
import type { SourcesTrust } from '../../machines/sources-context.js';

/** How often the trust of the file loaded is looked at again: `pulse trust` takes effect within this. */
const TRUST_CHECK_MS = 1000;

/**
 * The sources supervisor's `watchTrust`: looks every `TRUST_CHECK_MS` at whether the user still
 * trusts (or now trusts) the file loaded, and sends `trust.changed` when that flips, so `pulse
 * trust` starts the sources and `pulse trust --revoke` stops them, without a restart.
 */
export const createTrustWatch = (trusted: (hash: string) => boolean) =>
  fromCallback<EventObject, SourcesTrust>(({ input, sendBack }) => {
    if (input.status === 'none') return;
    const was = input.status === 'trusted';
    const timer = setInterval(() => {
      if (trusted(input.hash) !== was) sendBack({ type: 'trust.changed' });
    }, TRUST_CHECK_MS);
    timer.unref();
    return () => clearInterval(timer);
  });
