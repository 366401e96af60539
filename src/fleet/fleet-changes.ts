import { CHANGES_KEPT, type FleetChange, type FleetFile } from '../../machines/fleet-context.js';
import type { PulseEvent } from '../../machines/pulse-files.js';

/** A change the member knows, with the hashes the file may hold for it (the steer's text, as written). */
interface Tracked extends FleetChange {
  shas: string[];
}

/**
 * Ties each fleet change to this member's own event for it: event ids differ on every member,
 * so a receipt names the change by its fleet id (the steer id), which this finds from the event
 * an agent acknowledged, by the file and the hash the file held.
 */
export const fleetChanges = (tell: (change: FleetChange) => void) => {
  const changes: Tracked[] = [];
  const byEvent = new Map<string, Tracked>();
  const mapped = new Set<string>();

  const told = (change: Tracked) => {
    const { shas: _, ...shown } = change;
    tell(shown);
  };

  /** Ties the change to the latest unmapped event of its file with one of its hashes. */
  const tie = (change: Tracked, events: readonly PulseEvent[]) => {
    if (change.eventId !== null) return;
    const event = events.findLast(
      (e) =>
        !mapped.has(e.id) &&
        e.path === `.pulse/${change.file}.md` &&
        e.sha256 !== null &&
        change.shas.includes(e.sha256),
    );
    if (event === undefined) return;
    mapped.add(event.id);
    change.eventId = event.id;
    byEvent.set(event.id, change);
    told(change);
  };

  return {
    /** A change made here or applied from the fleet; known ones take the sequence once the stream gives it. */
    add(change: Omit<FleetChange, 'eventId'> & { shas: string[] }, events: readonly PulseEvent[]): void {
      const known = changes.find((c) => c.steerId === change.steerId);
      if (known !== undefined) {
        known.shas = [...new Set([...known.shas, ...change.shas])];
        if (change.seq !== null && known.seq !== change.seq) {
          known.seq = change.seq;
          told(known);
        }
        tie(known, events);
        return;
      }
      const tracked: Tracked = { ...change, eventId: null };
      changes.push(tracked);
      const dropped = changes.length > CHANGES_KEPT ? changes.shift() : undefined;
      if (dropped?.eventId) byEvent.delete(dropped.eventId);
      told(tracked);
      tie(tracked, events);
    },
    /** New events from the log: each change not tied yet looks for its own. */
    seen(events: readonly PulseEvent[]): void {
      for (const change of changes) tie(change, events);
    },
    /** The fleet change this member's event `eventId` is, if any. */
    ofEvent(eventId: string): FleetChange | undefined {
      return byEvent.get(eventId);
    },
    /** The change with fleet id `steerId`, if known. */
    ofSteer(steerId: string): FleetChange | undefined {
      return changes.find((c) => c.steerId === steerId);
    },
    /** The latest change of `file` known. */
    latest(file: FleetFile): FleetChange | undefined {
      return changes.findLast((c) => c.file === file);
    },
  };
};
