import {
  type AppliedSteer,
  CHANGES_KEPT,
  type FleetChange,
  type FleetContext,
  type FleetReceiptSeen,
  RECEIPTS_KEPT,
} from './fleet-context.js';

/** A steer at or before the last one applied to its file is a redelivery: it is not written again. */
export const alreadyApplied = (applied: AppliedSteer | undefined, seq: number): boolean =>
  applied !== undefined && seq <= applied.seq;

/** A hash the member applied or sent lately is no local edit (no echo); any other is. */
export const isLocalEdit = (
  sha256: string | null,
  before: string | null | undefined,
  recent: readonly string[],
) => before !== undefined && sha256 !== null && sha256 !== before && !recent.includes(sha256);

/** The fleet line of `pulse status`: connected (members), disconnected since, or why the project is out. */
export const fleetSentence = (fleet: FleetContext, state: string): string => {
  if (fleet.refused !== null) return `out of the fleet: ${fleet.refused}`;
  const where = `${fleet.key} on ${fleet.server} (${fleet.auth}) as ${fleet.machine}`;
  const unsent = fleet.unsent > 0 ? `; ${fleet.unsent} steer(s) kept to send` : '';
  if (state === 'connected') return `connected: ${where}; ${fleet.members.length} member(s)${unsent}`;
  if (state === 'disconnected') return `disconnected since ${fleet.since}, retrying: ${where}${unsent}`;
  return `connecting: ${where}${unsent}`;
};

/** The changes with `change` in its place (by fleet id, what is known kept), the oldest dropped past `CHANGES_KEPT`. */
export const withChange = (changes: readonly FleetChange[], change: FleetChange): FleetChange[] => {
  const known = changes.find((c) => c.steerId === change.steerId);
  if (known === undefined) return [...changes, change].slice(-CHANGES_KEPT);
  const merged = { ...known, seq: change.seq ?? known.seq, eventId: change.eventId ?? known.eventId };
  return changes.map((c) => (c === known ? merged : c));
};

/** The receipts with `receipt` added once (a redelivery is the same receipt id), the oldest dropped past `RECEIPTS_KEPT`. */
export const withReceipt = (
  receipts: readonly FleetReceiptSeen[],
  receipt: FleetReceiptSeen,
): FleetReceiptSeen[] =>
  receipts.some((r) => r.receiptId === receipt.receiptId)
    ? [...receipts]
    : [...receipts, receipt].slice(-RECEIPTS_KEPT);

/** The join loop's backoff step for this failure: after a good connection it starts again from the first. */
export const joinBackoffStep = (attempt: number, wasConnected: boolean): number =>
  wasConnected ? 0 : attempt;
