import type { AppliedSteer, FleetContext } from './fleet-context.js';

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
