import type { PulseActor } from '../../machines/pulse.js';
import type { PulseSystem, PulseSystemActors, PulseSystemId } from '../../machines/pulse-system.js';

/** A request the actor system could not serve; the message says why. */
export class PulseUnavailableError extends Error {
  override name = 'PulseUnavailableError';
}

/** The system of a project's root actor, typed by the system's map. */
export const systemOf = (actor: PulseActor): PulseSystem => actor.system;

/**
 * The actor under `id` in `system`, or undefined once the system has stopped (or before a
 * poller starts). The one place in `src/` that looks an actor up.
 */
export const lookUp = <K extends PulseSystemId>(
  system: PulseSystem,
  id: K,
): PulseSystemActors[K] | undefined => system.get(id);

/** The actor under `id` in a project's system; throws `PulseUnavailableError` once the system has stopped. */
export const actorOf = <K extends PulseSystemId>(
  actor: { system: PulseSystem },
  id: K,
): PulseSystemActors[K] => {
  const ref = lookUp(actor.system, id);
  if (ref === undefined)
    throw new PulseUnavailableError(`The ${String(id)} actor is not running: the project has stopped.`);
  return ref;
};
